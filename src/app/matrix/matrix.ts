/**
 * The model × question matrix (issue 43): for one benchmark, its items (rows; LongDA queries, checklist items, BLADE
 * decision types, any registered benchmark's `presentation.itemOutcomes`) against its run profiles (columns; the
 * Bradley–Terry player, `playerOf` / `runProfiles` in `src/core/review/pairwise.ts`), each repeat a dot coloured by
 * its outcome. Results' rule holds: a dot's outcome comes only from a complete stored score; an unscored (or
 * partly judged) run is a grey `unscored` dot, never mixed into a mean. The expected value is in the matrix only when
 * asked for and never in blind mode. Host-neutral: the panel and `loupe results --matrix` both build it here.
 */
import { findBenchmark, getBenchmark } from '../../core/benchmarks/registry.ts';
import type { BenchmarkDefinition, ItemOutcome } from '../../core/benchmarks/types.ts';
import { canonicalJson } from '../../core/eval/judges/canonical.ts';
import { runProfiles } from '../../core/review/pairwise.ts';
import type { RunRecord, StoredScore } from '../../core/store/records.ts';
import type { RunStore } from '../../core/store/types.ts';
import { LoupeInputError } from '../../core/util/errors.ts';
import type {
  MatrixColumn,
  MatrixDot,
  MatrixRow,
  MatrixRowFilter,
  MatrixVerdict,
  MatrixView,
} from '../../protocol/matrix.ts';
import { isRunScore } from '../results/outcomes.ts';

export type {
  MatrixColumn,
  MatrixDot,
  MatrixRow,
  MatrixRowFilter,
  MatrixVerdict,
  MatrixView,
} from '../../protocol/matrix.ts';

/** Which runs the matrix rests on: a list of run ids, or a predicate over stored runs (an experiment's scope). */
export type RunSelector = readonly string[] | ((run: RunRecord) => boolean);

/** Row filters in the order the views offer them. */
export const MATRIX_FILTERS: readonly MatrixRowFilter[] = [
  'all',
  'wrong-every-repeat',
  'disagree',
  'unscored',
  'tool-errors',
];

/** One item of the loaded matrix with every profile's repeats and (host side only) its expected value. */
interface LoadedRow {
  key: string;
  block: string;
  ref: string;
  question: string;
  expected: string;
  dots: Map<string, MatrixDot[]>;
}

/** The matrix as loaded from the store, before filtering; {@link matrixView} turns it into what a view shows. */
export interface LoadedMatrix {
  suite: string;
  title: string;
  columns: Array<Omit<MatrixColumn, 'mean'>>;
  rows: LoadedRow[];
  judges: string[];
  unscoredBlocks: Array<{ block: string; runIds: string[] }>;
}

const isFinal = (s: RunRecord['status']): boolean => s !== 'running' && s !== 'pending';

/**
 * Reads a benchmark's matrix from the run store.
 * @param store an open run store. @param o `suite`: a registered benchmark kind; `runs`: the runs to include (ids or a
 *   predicate; default every run of the suite that is not running or pending).
 * @throws LoupeInputError for an unknown suite, a benchmark without per-item outcomes, or a run selection that names
 *   runs of another suite or no run at all.
 */
export async function loadMatrix(store: RunStore, o: { suite: string; runs?: RunSelector }): Promise<LoadedMatrix> {
  const def: BenchmarkDefinition = getBenchmark(o.suite, 'suite');
  const items = def.presentation.itemOutcomes;
  if (!items) {
    throw new LoupeInputError(
      'suite',
      `${def.title} scores no per-item outcomes, so it has no model × question matrix`,
    );
  }
  let runs = (await store.listRuns({ suite: def.kind })).filter((r) => isFinal(r.status));
  const sel = o.runs;
  if (Array.isArray(sel)) {
    const want = new Set(sel as readonly string[]);
    const have = new Set(runs.map((r) => r.id));
    const missing = [...want].filter((id) => !have.has(id));
    if (missing.length) {
      throw new LoupeInputError(
        'runs',
        `${missing.length} of the runs asked for are not finished runs of ${def.title} in this store: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}`,
      );
    }
    runs = runs.filter((r) => want.has(r.id));
  } else if (typeof sel === 'function') runs = runs.filter(sel as (r: RunRecord) => boolean);
  if (!runs.length) {
    throw new LoupeInputError(
      'suite',
      `there are no finished runs of ${def.title} in this store${sel ? ' in the selection' : ''}`,
    );
  }
  runs.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  const profiles = runProfiles(runs);

  // newest complete score per run (Results' rule: a partly judged score is no score)
  const newest = new Map<string, StoredScore>();
  const runIds = new Set(runs.map((r) => r.id));
  for (const s of await store.scores.list()) if (runIds.has(s.runId) && !newest.has(s.runId)) newest.set(s.runId, s);
  const scored = new Map<string, { score: StoredScore; outcomes: ItemOutcome[] }>();
  const judges = new Set<string>();
  for (const [id, s] of newest) {
    if (s.pending !== 0 || !isRunScore(s.detail) || s.detail.error) continue;
    scored.set(id, { score: s, outcomes: items(s.detail) });
    judges.add(`${s.judgeId} ${canonicalJson(s.options)}`);
  }
  const answers = await store.getAnswersOf([...scored.keys()]);
  const toolErrors = await store.getToolErrorCountsOf(runs.filter((r) => r.steps > 0).map((r) => r.id));

  // columns in order of first run
  const columns = new Map<string, Omit<MatrixColumn, 'mean'>>();
  for (const r of runs) {
    const p = profiles.get(r.id)!;
    const c = columns.get(p.player.player) ?? {
      player: p.player.player,
      label: p.label,
      agent: p.player.agent,
      model: p.player.model,
      paramsHash: p.player.paramsHash,
      runIds: [],
      unscored: [],
    };
    c.runIds.push(r.id);
    if (!scored.has(r.id)) c.unscored.push(r.id);
    columns.set(p.player.player, c);
  }

  // rows: every item a scored run of the block has, in block order of first run, then the score's item order
  const rows = new Map<string, LoadedRow>();
  const byBlock = new Map<string, RunRecord[]>();
  for (const r of runs) byBlock.set(r.blockId, [...(byBlock.get(r.blockId) ?? []), r]);
  const unscoredBlocks: LoadedMatrix['unscoredBlocks'] = [];
  for (const [block, rs] of byBlock) {
    const blockRows: LoadedRow[] = [];
    for (const r of rs) {
      for (const oc of scored.get(r.id)?.outcomes ?? []) {
        const key = `${block}/${oc.ref}`;
        let row = rows.get(key);
        if (!row) {
          row = { key, block, ref: oc.ref, question: oc.question, expected: oc.expected, dots: new Map() };
          rows.set(key, row);
          blockRows.push(row);
        }
      }
    }
    if (!blockRows.length) {
      unscoredBlocks.push({ block, runIds: rs.map((r) => r.id) });
      continue;
    }
    for (const r of rs) {
      const p = profiles.get(r.id)!;
      const sc = scored.get(r.id);
      const byRef = new Map((sc?.outcomes ?? []).map((x) => [x.ref, x]));
      const stepOf = new Map((answers.get(r.id) ?? []).map((a) => [a.queryId, a.stepIndex]));
      for (const row of blockRows) {
        const oc = byRef.get(row.ref);
        const verdict: MatrixVerdict = !sc ? 'unscored' : oc ? oc.verdict : 'missing';
        const dot: MatrixDot = {
          runId: r.id,
          repeat: p.repeat,
          verdict,
          credit: oc && sc ? oc.credit : null,
          given: oc && sc ? oc.given : '',
          stepIndex: stepOf.get(row.ref) ?? null,
          toolErrors: toolErrors.get(r.id) ?? 0,
        };
        const list = row.dots.get(p.player.player) ?? [];
        list.push(dot);
        row.dots.set(p.player.player, list);
      }
    }
  }
  for (const row of rows.values()) for (const l of row.dots.values()) l.sort((a, b) => a.repeat - b.repeat);
  return {
    suite: def.kind,
    title: def.title,
    columns: [...columns.values()],
    rows: [...rows.values()],
    judges: [...judges].sort(),
    unscoredBlocks,
  };
}

const scoredCredit = (d: MatrixDot): number | null =>
  d.verdict === 'unscored' || d.verdict === 'missing' || d.verdict === 'pending' ? null : d.credit;

/**
 * The flags of a row over the columns shown: wrong in every scored repeat (credit 0 in each, at least one), profiles
 * disagree (two profiles' mean credits over their scored repeats differ, as `loupe compare` counts disagreements),
 * an unscored repeat, a repeat whose run had a tool error. Pure.
 */
export function rowFlags(cells: readonly MatrixDot[][]): MatrixRow['flags'] {
  const all = cells.flat();
  const credits = all.map(scoredCredit).filter((c): c is number => c !== null);
  const means = cells
    .map((c) => c.map(scoredCredit).filter((x): x is number => x !== null))
    .filter((xs) => xs.length)
    .map((xs) => xs.reduce((a, b) => a + b, 0) / xs.length);
  return {
    wrongEveryRepeat: credits.length > 0 && credits.every((c) => c === 0),
    disagree: means.some((m) => Math.abs(m - means[0]!) > 1e-12),
    unscored: all.some((d) => d.verdict === 'unscored' || d.verdict === 'pending'),
    toolErrors: all.some((d) => d.toolErrors > 0),
  };
}

const FLAG: Record<Exclude<MatrixRowFilter, 'all'>, keyof MatrixRow['flags']> = {
  'wrong-every-repeat': 'wrongEveryRepeat',
  disagree: 'disagree',
  unscored: 'unscored',
  'tool-errors': 'toolErrors',
};

/**
 * What a view shows of a loaded matrix: columns narrowed to `profiles` (players; null = all), rows kept by `filter`,
 * flags and column means computed over the columns shown, and the expected value of the rows in `reveal` — never when
 * `blind`. Pure.
 * @throws LoupeInputError naming a profile that is not a column.
 */
export function matrixView(
  m: LoadedMatrix,
  o: {
    filter?: MatrixRowFilter;
    profiles?: readonly string[] | null;
    blind: boolean;
    reveal?: 'all' | ReadonlySet<string>;
  },
): MatrixView {
  const filter = o.filter ?? 'all';
  const want = o.profiles && o.profiles.length ? o.profiles : null;
  if (want) {
    for (const p of want) {
      if (!m.columns.some((c) => c.player === p)) {
        throw new LoupeInputError(
          'profile',
          `no profile '${p}' among the runs of ${m.title} (profiles: ${m.columns.map((c) => c.player).join('; ')})`,
        );
      }
    }
  }
  const cols = want ? m.columns.filter((c) => want.includes(c.player)) : m.columns;
  const counts: Record<MatrixRowFilter, number> = {
    all: 0,
    'wrong-every-repeat': 0,
    disagree: 0,
    unscored: 0,
    'tool-errors': 0,
  };
  const rows: MatrixRow[] = [];
  for (const r of m.rows) {
    const cells = cols.map((c) => r.dots.get(c.player) ?? []);
    if (!cells.some((c) => c.length)) continue;
    const flags = rowFlags(cells);
    counts.all++;
    for (const [f, k] of Object.entries(FLAG)) if (flags[k]) counts[f as MatrixRowFilter]++;
    if (filter !== 'all' && !flags[FLAG[filter]]) continue;
    const show = !o.blind && (o.reveal === 'all' || (o.reveal instanceof Set && o.reveal.has(r.key)));
    rows.push({
      key: r.key,
      block: r.block,
      ref: r.ref,
      question: r.question,
      cells,
      flags,
      ...(show ? { expected: r.expected } : {}),
    });
  }
  const columns: MatrixColumn[] = cols.map((c, i) => {
    const xs = rows.flatMap((r) => r.cells[i]!.map(scoredCredit)).filter((x): x is number => x !== null);
    return { ...c, mean: xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null };
  });
  return {
    suite: m.suite,
    title: m.title,
    blind: o.blind,
    filter,
    profiles: want ? [...want] : null,
    columns,
    rows,
    counts,
    judges: m.judges,
    unscoredBlocks: m.unscoredBlocks,
  };
}

/**
 * The expected value of one item of a loaded matrix, on a reviewer's request.
 * @throws LoupeInputError in blind mode (it is never revealed there) or for an unknown row key.
 */
export function expectedOf(m: LoadedMatrix, key: string, blind: boolean): string {
  if (blind) {
    throw new LoupeInputError(
      'expected value',
      'blind mode is on: expected values are not shown in the matrix (turn off loupe.annotation.blind to see them)',
    );
  }
  const r = m.rows.find((x) => x.key === key);
  if (!r) throw new LoupeInputError('item', `no item '${key}' in the matrix of ${m.title}`);
  return r.expected;
}

/** Suites of the store whose benchmark has per-item outcomes (what the matrix can show), sorted. */
export async function matrixSuites(store: RunStore): Promise<string[]> {
  const kinds = new Set((await store.listRuns({})).map((r) => r.suite));
  return [...kinds].filter((k) => findBenchmark(k)?.presentation.itemOutcomes).sort();
}
