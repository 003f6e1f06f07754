/** Pure helpers of the Trajectory Timeline (unit-tested in Node). */
import type { AnswerMark, OutcomeTally, TimelineStep } from '../../src/protocol/timeline.ts';

/** Steps that called `tool` (all when empty) and, when `matches` is given (a search is active), are in it. */
export function filterSteps(
  steps: readonly TimelineStep[],
  tool: string,
  matches: ReadonlySet<number> | null,
): TimelineStep[] {
  return steps.filter((s) => (!tool || s.tools.includes(tool)) && (!matches || matches.has(s.index)));
}

/** 950 → "950 ms", 12_300 → "12.3 s", 600_000 → "10m 0s". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const m = Math.floor(ms / 60_000);
  return `${m}m ${Math.round((ms - m * 60_000) / 1000)}s`;
}

/** 950 → "950", 12_345 → "12.3k", 2_500_000 → "2.5M". */
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(1)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

const GLYPHS: [RegExp, string, string][] = [
  [/^python$/, 'Py', 'code'],
  [/^(read_doc|search_doc|retriever|list_files)$/, 'Doc', 'doc'],
  [/^(execute_query|describe_table|get_database_info)$/, 'SQL', 'sql'],
  [/^(answer|submit_analysis|write_report|final_answer)$/, 'Ans', 'answer'],
  [/^(notes|save_code|prompt)$/, 'Note', 'note'],
];

/** Short label and CSS class of a tool's icon; '' (a message without tool calls) → "Msg". */
export function toolGlyph(tool: string): { glyph: string; cls: string } {
  if (!tool) return { glyph: 'Msg', cls: 'msg' };
  for (const [re, glyph, cls] of GLYPHS) if (re.test(tool)) return { glyph, cls };
  return { glyph: tool.slice(0, 3), cls: 'other' };
}

/** Rows [start, end) to render for a viewport. */
export function visibleRange(
  scrollTop: number,
  viewportHeight: number,
  rowHeight: number,
  count: number,
  overscan = 8,
): { start: number; end: number } {
  if (count <= 0 || rowHeight <= 0) return { start: 0, end: 0 };
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight);
  const visible = Math.ceil(Math.max(0, viewportHeight) / rowHeight) + 1;
  const start = Math.max(0, first - overscan);
  const end = Math.min(count, first + visible + overscan);
  return { start, end: Math.max(start, end) };
}

/** The glyph of each verdict (the word is always shown next to it: colour is never the only cue). */
export const VERDICT_GLYPH: Record<AnswerMark['verdict'], string> = {
  right: '✓',
  wrong: '✗',
  partial: '◐',
  unanswered: '∅',
  pending: '…',
};

/**
 * The verdict of a step from the answers it recorded: `right` when all are right, `wrong` when all are wrong or
 * unanswered, `pending` while any waits for a judge, else `partial`; `text` is the row's label ("✓ right", "2✓ 1✗").
 */
export function stepVerdict(marks: readonly AnswerMark[]): { verdict: AnswerMark['verdict']; text: string } {
  const n = (v: AnswerMark['verdict']) => marks.filter((m) => m.verdict === v).length;
  const verdict: AnswerMark['verdict'] = n('pending')
    ? 'pending'
    : n('right') === marks.length
      ? 'right'
      : n('wrong') + n('unanswered') === marks.length
        ? 'wrong'
        : 'partial';
  if (marks.length === 1) return { verdict, text: `${VERDICT_GLYPH[verdict]} ${verdict}` };
  const parts = (['right', 'partial', 'wrong', 'unanswered', 'pending'] as const)
    .filter((v) => n(v))
    .map((v) => `${n(v)}${VERDICT_GLYPH[v]}`);
  return { verdict, text: parts.join(' ') };
}

/** "5 right · 1 partial · 2 wrong of 8 items" (verdicts with no items left out). */
export function tallyText(t: OutcomeTally): string {
  const parts = (['right', 'partial', 'wrong', 'unanswered', 'pending'] as const)
    .filter((v) => t[v])
    .map((v) => `${t[v]} ${v}`);
  return `${parts.join(' · ') || 'nothing scored'} of ${t.total} item${t.total === 1 ? '' : 's'}`;
}

/** One readable section of a tool call's arguments: multi-line text as code, a list of records as a table. */
export type ArgSection =
  | { title: string; kind: 'code'; text: string }
  | { title: string; kind: 'text'; text: string }
  | { title: string; kind: 'table'; columns: string[]; rows: string[][] };

/** `conceptual_variables` → "Conceptual variables", `q_id` → "Q id". */
export function humanKey(k: string): string {
  const t = k.replace(/[_-]+/g, ' ').trim();
  return t ? t[0]!.toUpperCase() + t.slice(1) : k;
}

const cellText = (v: unknown): string =>
  v === null || v === undefined
    ? ''
    : Array.isArray(v)
      ? v.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join(', ')
      : typeof v === 'object'
        ? JSON.stringify(v)
        : String(v);

/**
 * A tool call's arguments as readable sections (a BLADE submission: its conceptual variables as a table, its
 * transform and model code as code), or null when the arguments are not a JSON object with a structured or
 * multi-line field (then they are shown as they are). Strings with line breaks become code with real line breaks;
 * lists of records become tables over the union of their keys; anything else is one line of text.
 */
export function argSections(argumentsText: string): ArgSection[] | null {
  let v: unknown;
  try {
    v = JSON.parse(argumentsText);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const entries = Object.entries(v as Record<string, unknown>);
  const rich = entries.some(
    ([, x]) =>
      (typeof x === 'string' && x.includes('\n')) ||
      (Array.isArray(x) && x.some((r) => typeof r === 'object' && r !== null && !Array.isArray(r))),
  );
  if (!rich) return null;
  return entries.map(([k, x]): ArgSection => {
    const title = humanKey(k);
    if (typeof x === 'string') {
      return x.includes('\n') ? { title, kind: 'code', text: x.replace(/\s+$/, '') } : { title, kind: 'text', text: x };
    }
    if (Array.isArray(x) && x.length && x.every((r) => typeof r === 'object' && r !== null && !Array.isArray(r))) {
      const columns = [...new Set(x.flatMap((r) => Object.keys(r as object)))];
      return {
        title,
        kind: 'table',
        columns: columns.map(humanKey),
        rows: x.map((r) => columns.map((c) => cellText((r as Record<string, unknown>)[c]))),
      };
    }
    return { title, kind: 'text', text: cellText(x) };
  });
}
