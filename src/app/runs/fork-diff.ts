/**
 * The fork diff (issue 43): a forked run and its parent aligned from the fork step — the hint the fork was given, the
 * steps each took after the fork point side by side, what changed in code (a line diff of the kernel cells each ran
 * after the fork point), their answers and their scores. Host-neutral: the VS Code panel, the review panel (beside the
 * blind vote) and `loupe runs --fork-diff RUN` read the same view. Agent text stays data (plain strings, never markup).
 */
import { diffLines } from 'diff';
import { findBenchmark } from '../../core/benchmarks/registry.ts';
import type { KernelCellRecord, RunRecord, StepRecord, StoredScore } from '../../core/store/records.ts';
import type { RunStore } from '../../core/store/types.ts';
import { LoupeInputError } from '../../core/util/errors.ts';

/** One side's run as the diff names it. */
export interface ForkDiffRun {
  id: string;
  model: string | null;
  agent: string;
  status: string;
  steps: number;
}

/** One step after the fork point, on one side: what the model said and which tools it called (text, bounded). */
export interface ForkDiffStep {
  index: number;
  text: string;
  tools: string[];
}

/** A line of the code diff: kept (' '), only in the parent ('-'), only in the fork ('+'). */
export interface ForkDiffLine {
  op: ' ' | '-' | '+';
  text: string;
}

/** An answer of one query on each side. */
export interface ForkDiffAnswer {
  queryId: string;
  parent: string | null;
  fork: string | null;
  same: boolean;
}

/** A summary metric of the newest score on each side. */
export interface ForkDiffMetric {
  key: string;
  label: string;
  parent: number | null;
  fork: number | null;
  delta: number | null;
}

/** The whole diff. */
export interface ForkDiffView {
  /** `parent-fork`: the fork against the run it continues; `sibling-forks`: two forks of one run from one step ("parent" is the older). */
  relation: 'parent-fork' | 'sibling-forks';
  parent: ForkDiffRun;
  fork: ForkDiffRun;
  /** 1-based number of the parent's steps the fork replayed (0: it started over). */
  forkStep: number;
  /** The human steps given at the fork point (the fork's own hint or correction), in order. */
  hints: Array<{ who: string; kind: 'hint' | 'correction'; text: string }>;
  /** For sibling forks: the other fork's hints at the fork point ([] for a parent). */
  parentHints: Array<{ who: string; kind: 'hint' | 'correction'; text: string }>;
  /** Steps after the fork point, aligned by position: row k holds each side's step forkStep + k (null past its end). */
  steps: Array<{ parent: ForkDiffStep | null; fork: ForkDiffStep | null }>;
  /** Line diff of the code each side ran after the fork point (cells in order, joined). */
  code: ForkDiffLine[];
  /** Counts of the code diff. */
  codeStats: { added: number; removed: number; kept: number; parentCells: number; forkCells: number };
  answers: ForkDiffAnswer[];
  /** Newest stored score of each side: judge and options, so that a difference of scoring options shows. */
  scores: {
    parent: { judgeId: string; options: Record<string, unknown>; scoredAt: string } | null;
    fork: { judgeId: string; options: Record<string, unknown>; scoredAt: string } | null;
  };
  metrics: ForkDiffMetric[];
  /** Notes on the alignment (a score computed with other options, a side without cells, ...). */
  notes: string[];
}

const STEP_TEXT = 2_000;
const MAX_CODE_LINES = 4_000;

function runOf(r: RunRecord, steps: number): ForkDiffRun {
  return { id: r.id, model: r.model, agent: r.agent, status: r.status, steps };
}

function stepOf(s: StepRecord): ForkDiffStep {
  const t = (s.assistant.content ?? '').trim();
  return {
    index: s.index,
    text: t.length > STEP_TEXT ? `${t.slice(0, STEP_TEXT)}…` : t,
    tools: s.toolCalls.map((c) => c.name),
  };
}

const answerText = (a: number | number[]) => (Array.isArray(a) ? `[${a.join(', ')}]` : String(a));

function codeOf(cells: readonly KernelCellRecord[], from: number): string {
  return cells
    .filter((c) => c.stepIndex >= from && !c.replay)
    .sort((a, b) => a.seq - b.seq)
    .map((c) => c.code.replace(/\s+$/, ''))
    .join('\n\n');
}

/**
 * Finds the parent of a fork.
 * @throws LoupeInputError naming the run when it is unknown, not a fork, or its parent is no longer in the store.
 */
export async function forkPair(store: RunStore, runId: string): Promise<{ fork: RunRecord; parent: RunRecord }> {
  const fork = await store.getRun(runId);
  if (!fork) throw new LoupeInputError(`run ${runId}`, 'not in the store');
  const f = fork.params.forkOf;
  if (!f) {
    throw new LoupeInputError(
      `run ${runId}`,
      'is not a fork: it continues no other run (fork a run from a step first)',
    );
  }
  const parent = await store.getRun(f.runId);
  if (!parent) throw new LoupeInputError(`run ${runId}`, `its parent run ${f.runId} is not in this store`);
  return { fork, parent };
}

/**
 * The fork diff of a forked run against its parent.
 * @param store an open run store; `runId` the fork.
 * @returns the aligned view (steps after the fork point, code diff capped at 4,000 lines, answers, newest scores).
 * @throws LoupeInputError as {@link forkPair}.
 */
export async function forkDiff(store: RunStore, runId: string): Promise<ForkDiffView> {
  const { fork, parent } = await forkPair(store, runId);
  return alignedDiff(store, parent, fork, fork.params.forkOf!.step, 'parent-fork');
}

/**
 * The fork diff of a pair of runs, when they are related by a fork: one continues the other (parent ↔ fork), or both
 * continue one run from the same step (sibling forks, the older as "parent").
 * @returns the view, or null when the two runs are not so related.
 */
export async function pairForkDiff(store: RunStore, runA: string, runB: string): Promise<ForkDiffView | null> {
  const [a, b] = [await store.getRun(runA), await store.getRun(runB)];
  if (!a || !b) return null;
  if (b.params.forkOf?.runId === a.id) return alignedDiff(store, a, b, b.params.forkOf.step, 'parent-fork');
  if (a.params.forkOf?.runId === b.id) return alignedDiff(store, b, a, a.params.forkOf.step, 'parent-fork');
  const fa = a.params.forkOf;
  const fb = b.params.forkOf;
  if (fa && fb && fa.runId === fb.runId && fa.step === fb.step) {
    const [older, newer] = a.createdAt <= b.createdAt ? [a, b] : [b, a];
    return alignedDiff(store, older, newer, fa.step, 'sibling-forks');
  }
  return null;
}

async function alignedDiff(
  store: RunStore,
  parent: RunRecord,
  fork: RunRecord,
  at: number,
  relation: ForkDiffView['relation'],
): Promise<ForkDiffView> {
  const [ps, fs, pc, fc, pa, fa, iv, piv, psc, fsc] = await Promise.all([
    store.getSteps(parent.id),
    store.getSteps(fork.id),
    store.getCells(parent.id),
    store.getCells(fork.id),
    store.getAnswers(parent.id),
    store.getAnswers(fork.id),
    store.getInterventions(fork.id),
    relation === 'sibling-forks' ? store.getInterventions(parent.id) : Promise.resolve([]),
    store.scores.list(parent.id).catch((): StoredScore[] => []),
    store.scores.list(fork.id).catch((): StoredScore[] => []),
  ]);
  const notes: string[] = [];
  const pAfter = ps.filter((s) => s.index >= at).sort((a, b) => a.index - b.index);
  const fAfter = fs.filter((s) => s.index >= at).sort((a, b) => a.index - b.index);
  const steps: ForkDiffView['steps'] = [];
  for (let k = 0; k < Math.max(pAfter.length, fAfter.length); k++) {
    steps.push({ parent: pAfter[k] ? stepOf(pAfter[k]!) : null, fork: fAfter[k] ? stepOf(fAfter[k]!) : null });
  }
  const atFork = (list: typeof iv) =>
    list
      .filter((i) => i.beforeStep === at)
      .sort((a, b) => a.seq - b.seq)
      .map((i) => ({ who: i.who, kind: i.kind, text: i.text }));
  const hints = atFork(iv);
  const parentHints = atFork(piv);
  if (!hints.length) {
    notes.push('the fork was given no hint at the fork point: it differs by model, sampling or settings only');
  }

  const pCode = codeOf(pc, at);
  const fCode = codeOf(fc, at);
  const code: ForkDiffLine[] = [];
  const stats = {
    added: 0,
    removed: 0,
    kept: 0,
    parentCells: pc.filter((c) => c.stepIndex >= at && !c.replay).length,
    forkCells: fc.filter((c) => c.stepIndex >= at && !c.replay).length,
  };
  for (const part of diffLines(pCode ? `${pCode}\n` : '', fCode ? `${fCode}\n` : '')) {
    const op: ForkDiffLine['op'] = part.added ? '+' : part.removed ? '-' : ' ';
    const lines = part.value.replace(/\n$/, '').split('\n');
    for (const text of lines) {
      if (op === '+') stats.added++;
      else if (op === '-') stats.removed++;
      else stats.kept++;
      if (code.length < MAX_CODE_LINES) code.push({ op, text });
    }
  }
  if (stats.added + stats.removed + stats.kept > MAX_CODE_LINES) {
    notes.push(`the code diff is cut at ${MAX_CODE_LINES} lines`);
  }

  const pMap = new Map(pa.map((a) => [a.queryId, answerText(a.answer)]));
  const fMap = new Map(fa.map((a) => [a.queryId, answerText(a.answer)]));
  const ids = [...new Set([...pMap.keys(), ...fMap.keys()])].sort((a, b) =>
    a.localeCompare(b, 'en', { numeric: true }),
  );
  const answers = ids.map((q) => ({
    queryId: q,
    parent: pMap.get(q) ?? null,
    fork: fMap.get(q) ?? null,
    same: pMap.get(q) === fMap.get(q),
  }));

  const p0 = psc[0];
  const f0 = fsc[0];
  const def = findBenchmark(fork.suite);
  const metrics: ForkDiffMetric[] = [];
  const keys = [...new Set([...Object.keys(p0?.summary ?? {}), ...Object.keys(f0?.summary ?? {})])];
  const main = def?.presentation.mainMetric?.key;
  if (main && keys.includes(main)) {
    keys.splice(keys.indexOf(main), 1);
    keys.unshift(main);
  }
  for (const key of keys) {
    const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
    const a = num(p0?.summary[key]);
    const b = num(f0?.summary[key]);
    if (a === null && b === null) continue;
    metrics.push({
      key,
      label: key === main ? def!.presentation.mainMetric!.label : key,
      parent: a,
      fork: b,
      delta: a !== null && b !== null ? b - a : null,
    });
  }
  if (p0 && f0 && (p0.judgeId !== f0.judgeId || JSON.stringify(p0.options) !== JSON.stringify(f0.options))) {
    notes.push('the two newest scores used another judge or other scoring options: compare their metrics with care');
  }
  if (!p0 || !f0) {
    notes.push(`${!p0 && !f0 ? 'neither run is' : !p0 ? 'the parent is not' : 'the fork is not'} scored yet`);
  }
  const score = (s: StoredScore | undefined) =>
    s ? { judgeId: s.judgeId, options: s.options, scoredAt: s.scoredAt } : null;
  return {
    relation,
    parent: runOf(parent, ps.length),
    fork: runOf(fork, fs.length),
    forkStep: at,
    hints,
    parentHints,
    steps,
    code,
    codeStats: stats,
    answers,
    scores: { parent: score(p0), fork: score(f0) },
    metrics,
    notes,
  };
}

/**
 * The fork diff as plain text lines (the CLI's output): header, hints, code diff, answers, metrics.
 * @returns lines without trailing newline (the caller neutralises control characters).
 */
export function forkDiffLines(v: ForkDiffView): string[] {
  const out: string[] = [];
  out.push(
    `fork ${v.fork.id} (${v.fork.model ?? v.fork.agent}, ${v.fork.status}, ${v.fork.steps} steps) of ${v.parent.id} (${v.parent.model ?? v.parent.agent}, ${v.parent.status}, ${v.parent.steps} steps) from step ${v.forkStep}`,
  );
  for (const h of v.hints) out.push(`${h.kind} by ${h.who}: ${h.text.replace(/\s+/g, ' ')}`);
  out.push(
    '',
    `steps after the fork point: parent ${v.steps.filter((s) => s.parent).length}, fork ${v.steps.filter((s) => s.fork).length}`,
  );
  out.push(
    '',
    `code (${v.codeStats.parentCells} parent cells, ${v.codeStats.forkCells} fork cells: +${v.codeStats.added} −${v.codeStats.removed})`,
  );
  for (const l of v.code) if (l.op !== ' ') out.push(`${l.op} ${l.text}`);
  if (v.answers.length) {
    out.push('', 'answers (query: parent → fork)');
    for (const a of v.answers) out.push(`${a.same ? ' ' : '*'} ${a.queryId}: ${a.parent ?? '—'} → ${a.fork ?? '—'}`);
  }
  if (v.metrics.length) {
    out.push('', 'score (metric: parent → fork)');
    const f = (x: number | null) => (x === null ? '—' : `${Number(x.toFixed(4))}`);
    for (const m of v.metrics) {
      out.push(
        `  ${m.label}: ${f(m.parent)} → ${f(m.fork)}${m.delta !== null && m.delta !== 0 ? ` (${m.delta > 0 ? '+' : ''}${Number(m.delta.toFixed(4))})` : ''}`,
      );
    }
  }
  for (const n of v.notes) out.push(`note: ${n}`);
  return out;
}
