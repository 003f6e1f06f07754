/**
 * Per-item correctness where the expert looks (issue 22): the verdict of each answer step of a run (timeline), a run's
 * outcomes from its stored score or — for judge-free benchmarks — scored live, the spread of a metric across repeats,
 * and the per-question drill-down of the Results view (block → question → each repeat's answer vs truth, with the
 * step). Items come from each benchmark's `presentation.itemOutcomes`, never from its name.
 */
import { findBenchmark } from '../../core/benchmarks/registry.ts';
import type { ItemOutcome } from '../../core/benchmarks/types.ts';
import { createJudge } from '../../core/eval/judges/factory.ts';
import { judgementStoreOf } from '../../core/eval/store.ts';
import type { RunScore } from '../../core/eval/run-score.ts';
import { scoreStoredRun } from '../../core/runs/score-stored-run.ts';
import type { AnswerRecord, RunRecord, StoredScore } from '../../core/store/records.ts';
import type { RunStore } from '../../core/store/types.ts';
import type { Block, Suite } from '../../core/suites/types.ts';
import { seededRandom } from '../../core/util/random.ts';
import { runProfiles } from '../../core/review/pairwise.ts';
import type { AnswerMark, OutcomeTally, TimelineScoring } from '../../protocol/timeline.ts';
import type { QuestionDrilldown, Spread } from '../../protocol/results.ts';

/** True when a stored score's detail is a whole {@link RunScore} (what `loupe score` and the surfaces save). */
export const isRunScore = (d: unknown): d is RunScore =>
  typeof d === 'object' &&
  d !== null &&
  typeof (d as RunScore).runId === 'string' &&
  typeof (d as RunScore).benchmark === 'string' &&
  typeof (d as RunScore).summary === 'object' &&
  'detail' in d;

/**
 * Counts outcomes by verdict.
 * @returns counts of right, partial, wrong, unanswered and pending items, and their total.
 */
export function outcomeTally(outcomes: readonly ItemOutcome[]): OutcomeTally {
  const t: OutcomeTally = { right: 0, partial: 0, wrong: 0, unanswered: 0, pending: 0, total: outcomes.length };
  for (const o of outcomes) t[o.verdict]++;
  return t;
}

/**
 * Places each item outcome on the step that recorded its (final) answer.
 * @param answers the run's answer records (`store.getAnswers`): `queryId` and the 0-based `stepIndex` that set it.
 * @param outcomes the run score's items ({@link ItemOutcome}; `ref` matches an answer's `queryId` when answered
 *   through the answer tool).
 * @returns `byStep`: step index → marks in outcome order; `unplaced`: outcomes with no answer record (unanswered
 *   items, checklist facts judged on the whole report).
 */
export function answerMarks(
  answers: ReadonlyArray<Pick<AnswerRecord, 'queryId' | 'stepIndex'>>,
  outcomes: readonly ItemOutcome[],
): { byStep: Record<number, AnswerMark[]>; unplaced: AnswerMark[] } {
  const stepOf = new Map(answers.map((a) => [a.queryId, a.stepIndex]));
  const byStep: Record<number, AnswerMark[]> = {};
  const unplaced: AnswerMark[] = [];
  for (const o of outcomes) {
    const step = stepOf.get(o.ref);
    const mark: AnswerMark = {
      ref: o.ref,
      question: o.question,
      verdict: o.verdict,
      credit: o.credit,
      given: o.given,
      expected: o.expected,
      ...(step !== undefined ? { stepIndex: step } : {}),
    };
    if (step === undefined) unplaced.push(mark);
    else (byStep[step] ??= []).push(mark);
  }
  return { byStep, unplaced };
}

/** The newest stored score of a run whose detail is a whole RunScore, or undefined. */
export async function latestRunScore(
  store: RunStore,
  runId: string,
): Promise<{ score: RunScore; scoredAt: string } | undefined> {
  let rows: StoredScore[];
  try {
    rows = await store.scores.list(runId);
  } catch {
    return undefined; // a store never scored
  }
  for (const r of rows) if (isRunScore(r.detail)) return { score: r.detail, scoredAt: r.scoredAt };
  return undefined;
}

/**
 * The timeline's correctness marks of a run: from its newest stored score, else — for a judge-free benchmark whose
 * ground truth Loupe can read (LongDA tolerance matching) — scored now with the benchmark's default options.
 * @param suites suite cache shared across calls (live scoring reloads nothing it already has; it reads the run's
 *   files from the store's copy only, never a recorded workspace: issue 36).
 * @returns null when the benchmark has no per-item outcomes, or nothing could be scored (the reason is `error`).
 */
export async function timelineScoring(
  store: RunStore,
  run: RunRecord,
  suites?: Map<string, Promise<Suite>>,
): Promise<TimelineScoring | null> {
  const def = findBenchmark(run.suite);
  const items = def?.presentation.itemOutcomes;
  if (!def || !items) return null;
  const stored = await latestRunScore(store, run.id);
  let score: RunScore;
  let source: TimelineScoring['source'];
  let scoredAt: string;
  if (stored && !stored.score.error) {
    score = stored.score;
    source = 'stored';
    scoredAt = stored.scoredAt;
  } else if (def.judgeFree) {
    score = await scoreStoredRun(store, run.id, {
      judge: createJudge({ kind: 'none' }, judgementStoreOf(store)),
      runsRoot: null,
      ...(suites ? { suites } : {}),
    });
    source = 'live';
    scoredAt = new Date().toISOString();
  } else {
    return null;
  }
  if (score.error) return { source, scoredAt, tally: outcomeTally([]), byStep: {}, unplaced: [], error: score.error };
  const outcomes = items(score);
  const { byStep, unplaced } = answerMarks(await store.getAnswers(run.id), outcomes);
  return { source, scoredAt, tally: outcomeTally(outcomes), byStep, unplaced };
}

/** Repeats from which a spread is shown as a mean with a bootstrap CI (fewer: min–max and every point). */
export const SPREAD_CI_FROM = 5;

/**
 * The spread of a metric across repeats: for fewer than {@link SPREAD_CI_FROM} values, min–max and every point; from
 * 5 on, the mean with a percentile-bootstrap 95% CI of the mean (`resamples` resamples with replacement, seeded, so
 * the same values always give the same interval).
 * @param values one value per repeat (non-finite values are dropped); same unit in and out.
 * @returns the spread with `n` and the points in ascending order, or null for no values.
 */
export function spreadOf(values: readonly number[], o: { resamples?: number; seed?: number } = {}): Spread | null {
  const xs = values.filter((v) => Number.isFinite(v));
  const n = xs.length;
  if (!n) return null;
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const min = Math.min(...xs);
  const max = Math.max(...xs);
  const points = [...xs].sort((a, b) => a - b);
  if (n < SPREAD_CI_FROM) return { kind: 'points', n, mean, min, max, points };
  const rnd = seededRandom(o.seed ?? 42);
  const B = o.resamples ?? 2000;
  const means: number[] = [];
  for (let b = 0; b < B; b++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += xs[Math.floor(rnd() * n)] as number;
    means.push(s / n);
  }
  means.sort((a, b) => a - b);
  const q = (p: number) => means[Math.min(B - 1, Math.max(0, Math.floor(p * B)))] as number;
  return { kind: 'ci', n, mean, min, max, lo: q(0.025), hi: q(0.975), points };
}

/**
 * The per-question drill-down of one benchmark's scored runs: block → question → each repeat's answer against the
 * truth, with the run and the step that recorded it, and the spread of credit across the repeats of each run profile
 * ({@link runProfiles}: the Bradley–Terry player; two models are never pooled, issue 42).
 * @param runs the runs (model label as shown in the Results tables); `scores` their newest whole RunScores by run id;
 *   `answers` their answer records by run id (for the step links); `questionTexts` the question as the agent was asked
 *   it, by `<suite>\0<block>\0<ref>` (the item outcome's own label where missing).
 * @returns blocks sorted by id, questions in the score's order, repeats by profile then repeat; runs without a score
 *   are left out.
 */
export function questionDrilldown(
  runs: readonly RunRecord[],
  scores: ReadonlyMap<string, RunScore>,
  answers: ReadonlyMap<string, readonly AnswerRecord[]>,
  questionTexts: ReadonlyMap<string, string> = new Map(),
): QuestionDrilldown[] {
  const profiles = runProfiles(runs.filter((r) => scores.has(r.id)));
  const byBlock = new Map<string, RunRecord[]>();
  for (const r of runs) {
    if (scores.has(r.id)) {
      byBlock.set(`${r.suite}\u0000${r.blockId}`, [...(byBlock.get(`${r.suite}\u0000${r.blockId}`) ?? []), r]);
    }
  }
  const out: QuestionDrilldown[] = [];
  for (const [key, rs] of [...byBlock.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const [suite, blockId] = key.split('\u0000') as [string, string];
    const items = findBenchmark(suite)?.presentation.itemOutcomes;
    if (!items) continue;
    const questions = new Map<string, QuestionDrilldown['questions'][number]>();
    const pr = (r: RunRecord) => profiles.get(r.id)!;
    rs.sort(
      (a, b) =>
        pr(a).label.localeCompare(pr(b).label) ||
        pr(a).player.player.localeCompare(pr(b).player.player) ||
        pr(a).repeat - pr(b).repeat,
    );
    for (const r of rs) {
      const stepOf = new Map((answers.get(r.id) ?? []).map((a) => [a.queryId, a.stepIndex]));
      for (const o of items(scores.get(r.id) as RunScore)) {
        let q = questions.get(o.ref);
        if (!q) {
          questions.set(
            o.ref,
            (q = {
              ref: o.ref,
              question: questionTexts.get(`${suite}\u0000${blockId}\u0000${o.ref}`) ?? o.question,
              expected: o.expected,
              repeats: [],
              spread: null,
              profiles: [],
            }),
          );
        }
        const step = stepOf.get(o.ref);
        q.repeats.push({
          runId: r.id,
          model: r.model ?? r.agent,
          profile: pr(r).label,
          repeat: pr(r).repeat,
          verdict: o.verdict,
          credit: o.credit,
          given: o.given,
          ...(step !== undefined ? { stepIndex: step } : {}),
        });
      }
    }
    const qs = [...questions.values()];
    for (const q of qs) {
      const by = new Map<string, QuestionDrilldown['questions'][number]['profiles'][number] & { credits: number[] }>();
      for (const x of q.repeats) {
        const p = pr(rs.find((r) => r.id === x.runId)!);
        let g = by.get(p.player.player);
        if (!g) {
          by.set(
            p.player.player,
            (g = { player: p.player.player, label: p.label, runIds: [], spread: null, credits: [] }),
          );
        }
        g.runIds.push(x.runId);
        if (x.credit !== null) g.credits.push(x.credit);
      }
      q.profiles = [...by.values()].map(({ credits, ...g }) => ({ ...g, spread: spreadOf(credits) }));
      q.spread = q.profiles.length === 1 ? q.profiles[0]!.spread : null;
    }
    out.push({ suite, blockId, runIds: rs.map((r) => r.id), questions: qs });
  }
  return out;
}

/**
 * The text of each item of a block as the agent was asked it (what the drill-down shows instead of an item's id),
 * by the refs item outcomes use: the item's id and, for a LongDA query, its LongTA q_id.
 * @returns ref → text; items with no text of their own (a BLADE MCQ) are left out.
 */
export function itemTexts(block: Pick<Block, 'items'>): Map<string, string> {
  const out = new Map<string, string>();
  for (const it of block.items) {
    const text =
      'question' in it
        ? it.question
        : 'text' in it
          ? it.text
          : 'instruction' in it
            ? it.instruction
            : 'prompt' in it
              ? it.prompt
              : '';
    if (!text.trim()) continue;
    out.set(it.id, text);
    if ('longdaId' in it) out.set(it.longdaId, text);
  }
  return out;
}
