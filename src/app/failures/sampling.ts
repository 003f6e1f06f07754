/**
 * Seeded stratified sampling of what experts analyse, as the DDR-Bench paper did by hand: a failure-analysis queue
 * of items judged incorrect, sampled per model × scenario and served with their trajectory (§6), and a
 * hallucination queue of insights sampled per model × domain (§7). Source: DDR-Bench paper §6, §7; issue 19.
 */
import type { AnnotationItem, AnnotationQueue } from '../../core/annotations/model.ts';
import type { AnnotationStore } from '../../core/annotations/store.ts';
import { findBenchmark } from '../../core/benchmarks/registry.ts';
import type { RunScore } from '../../core/eval/run-score.ts';
import type { RunRecord } from '../../core/store/records.ts';
import type { RunStore } from '../../core/store/types.ts';
import { LoupeInputError } from '../../core/util/errors.ts';
import { seededRandom } from '../../core/util/random.ts';
import { ensureFailureCase, ensureHallucinationCheck } from '../../core/failures/tags.ts';
import { checkability, splitAtomicFacts } from '../../core/eval/atomic-facts.ts';

/** FNV-1a of a string (32 bit): mixes a stratum's name into the seed. */
function fnv(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** One stratum of a sample. */
export interface Stratum<T> {
  stratum: string;
  /** Candidates in the stratum. */
  population: number;
  sampled: T[];
}

/**
 * Draws up to `perStratum` items from each stratum without replacement. Each stratum is sorted by `keyOf` and then
 * shuffled (Fisher–Yates) with a generator seeded by `seed` mixed with the stratum's name, so a stratum's sample
 * depends only on its own candidates and the seed: the same inputs give the same sample in any listing order, and
 * adding runs of another model changes no other stratum's sample.
 * @param perStratum a whole number ≥ 1. @returns strata sorted by name, each with its population and sample.
 * @throws LoupeInputError for a bad `perStratum` or two candidates with one key.
 */
export function stratifiedSample<T>(
  items: readonly T[],
  stratumOf: (t: T) => string,
  keyOf: (t: T) => string,
  perStratum: number,
  seed: number,
): Array<Stratum<T>> {
  if (!Number.isInteger(perStratum) || perStratum < 1) {
    throw new LoupeInputError('items per stratum', `must be a whole number ≥ 1, got ${String(perStratum)}`);
  }
  const by = new Map<string, T[]>();
  for (const t of items) {
    const k = stratumOf(t);
    const l = by.get(k);
    if (l) l.push(t);
    else by.set(k, [t]);
  }
  return [...by.keys()].sort().map((stratum) => {
    const xs = [...by.get(stratum)!].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
    for (let i = 1; i < xs.length; i++) {
      if (keyOf(xs[i]!) === keyOf(xs[i - 1]!)) {
        throw new LoupeInputError(`stratum ${stratum}`, `two candidates share the key ${keyOf(xs[i]!)}`);
      }
    }
    const rnd = seededRandom((seed ^ fnv(stratum)) >>> 0);
    for (let i = xs.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [xs[i], xs[j]] = [xs[j]!, xs[i]!];
    }
    return { stratum, population: xs.length, sampled: xs.slice(0, perStratum) };
  });
}

/** Queue order of a sample: round-robin over strata, so a queue worked part-way covers every stratum. */
export function interleave<T>(strata: ReadonlyArray<Stratum<T>>): T[] {
  const out: T[] = [];
  const max = Math.max(0, ...strata.map((s) => s.sampled.length));
  for (let i = 0; i < max; i++) for (const s of strata) if (i < s.sampled.length) out.push(s.sampled[i]!);
  return out;
}

/** Which runs to sample from. */
export interface SampleSelection {
  suite?: string;
  runIds?: readonly string[];
  /** Items per stratum (model × scenario), default 10. */
  perStratum?: number;
  /** Sampling seed, default 0. */
  seed?: number;
}

/** A run skipped by a sample and why. */
export interface Skipped {
  runId: string;
  reason: string;
}

/** What opening a sampled queue gives. */
export interface SampledQueue {
  queue: AnnotationQueue;
  items: AnnotationItem[];
  strata: Array<{ stratum: string; population: number; sampled: number }>;
  skipped: Skipped[];
}

async function selectedRuns(runs: RunStore, sel: SampleSelection): Promise<RunRecord[]> {
  if (sel.runIds?.length) {
    const out: RunRecord[] = [];
    for (const id of sel.runIds) {
      const r = await runs.getRun(id);
      if (!r) throw new LoupeInputError(`run ${id}`, 'is not in the store');
      out.push(r);
    }
    return out;
  }
  return runs.listRuns(sel.suite ? { suite: sel.suite } : {});
}

/** The newest stored score of a run (as `loupe score` saved it), or undefined. */
export async function latestScore(runs: RunStore, runId: string): Promise<RunScore | undefined> {
  const s = (await runs.scores.list(runId))[0];
  return s ? (s.detail as RunScore) : undefined;
}

/** `model · scenario`: the strata of both queues and the rows of the figures. */
export const stratumName = (model: string, scenario: string) => `${model} · ${scenario}`;

/**
 * Opens the failure-analysis queue: for each selected run with a saved score, the items its benchmark's
 * `failureAnalysis.failedItems` reports as judged incorrect; a seeded stratified sample per model × scenario
 * ({@link stratifiedSample}); one `failure-case` item each (linked to the run's trajectory); a `sampled` queue in
 * round-robin order. Opening it again with the same selection, N and seed gives the same queue.
 * Source: DDR-Bench paper §6 (206 sampled items, each linked to its trajectory).
 * @throws LoupeInputError when no selected run has a failed item to sample (with why runs were skipped).
 */
export async function openFailureQueue(
  ann: AnnotationStore,
  runs: RunStore,
  sel: SampleSelection = {},
): Promise<SampledQueue> {
  const perStratum = sel.perStratum ?? 10;
  const seed = sel.seed ?? 0;
  const skipped: Skipped[] = [];
  type Cand = {
    run: RunRecord;
    score: RunScore;
    stratum: string;
    key: string;
    ref: string;
    question: string;
    detail: string;
    taxonomy: string;
    scenario: string;
  };
  const cands: Cand[] = [];
  for (const run of await selectedRuns(runs, sel)) {
    const fa = findBenchmark(run.suite)?.failureAnalysis;
    if (!fa) {
      skipped.push({ runId: run.id, reason: `${run.suite} has no failure analysis` });
      continue;
    }
    const score = await latestScore(runs, run.id);
    if (!score) {
      skipped.push({ runId: run.id, reason: 'not scored yet' });
      continue;
    }
    if (score.error) {
      skipped.push({ runId: run.id, reason: `its score failed: ${score.error}` });
      continue;
    }
    const failed = fa.failedItems(score);
    if (!failed.length) {
      skipped.push({ runId: run.id, reason: 'no item judged incorrect' });
      continue;
    }
    const scenario = fa.scenario(score);
    for (const f of failed) {
      cands.push({
        run,
        score,
        stratum: stratumName(score.model, scenario),
        key: `${run.id}\u0000${f.ref}`,
        ...f,
        taxonomy: fa.taxonomy.id,
        scenario,
      });
    }
  }
  if (!cands.length) {
    throw new LoupeInputError(
      'failure analysis',
      `no scored run has an item judged incorrect${
        skipped.length
          ? ` (${skipped
              .slice(0, 5)
              .map((s) => `${s.runId}: ${s.reason}`)
              .join('; ')})`
          : ''
      }`,
    );
  }
  const strata = stratifiedSample(
    cands,
    (c) => c.stratum,
    (c) => c.key,
    perStratum,
    seed,
  );
  const items: AnnotationItem[] = [];
  const stepCounts = new Map<string, number>();
  for (const c of interleave(strata)) {
    if (!stepCounts.has(c.run.id)) stepCounts.set(c.run.id, (await runs.getStepSummaries(c.run.id)).length);
    items.push(
      await ensureFailureCase(ann, c.run, stepCounts.get(c.run.id)!, {
        benchmark: c.run.suite,
        runId: c.run.id,
        blockId: c.run.blockId,
        model: c.score.model,
        scenario: c.scenario,
        ref: c.ref,
        question: c.question,
        detail: c.detail,
        taxonomy: c.taxonomy,
      }),
    );
  }
  const queue = await ann.openQueue({
    kind: 'sampled',
    ...(sel.suite ? { suite: sel.suite } : {}),
    itemIds: items.map((i) => i.id),
    sampling: { title: 'Failure analysis', perStratum, seed, strata: strata.length },
  });
  return {
    queue,
    items,
    strata: strata.map((s) => ({ stratum: s.stratum, population: s.population, sampled: s.sampled.length })),
    skipped,
  };
}

/**
 * Opens the hallucination queue: the insights of the selected runs (benchmarks with `failureAnalysis.insights`),
 * split into atomic facts (`splitAtomicFacts`; facts that are not checkable are skipped with the rule's reason),
 * a seeded stratified sample per model × domain, one `hallucination-check` item per fact, a `sampled` queue in
 * round-robin order. Each item asks whether the insight's facts are correct and derivable from what the agent saw.
 * Source: DDR-Bench paper §7 (1,850 sampled insights, Table 6).
 * @throws LoupeInputError when no selected run has an insight.
 */
export async function openHallucinationQueue(
  ann: AnnotationStore,
  runs: RunStore,
  sel: SampleSelection = {},
): Promise<SampledQueue> {
  const perStratum = sel.perStratum ?? 10;
  const seed = sel.seed ?? 0;
  const skipped: Skipped[] = [];
  type Cand = {
    run: RunRecord;
    model: string;
    scenario: string;
    stratum: string;
    key: string;
    index: number;
    text: string;
    stepIndex: number | null;
  };
  const cands: Cand[] = [];
  for (const run of await selectedRuns(runs, sel)) {
    const fa = findBenchmark(run.suite)?.failureAnalysis;
    if (!fa?.insights) {
      skipped.push({ runId: run.id, reason: `${run.suite} has no insights to audit` });
      continue;
    }
    const score = await latestScore(runs, run.id);
    const model = score?.model ?? run.model ?? run.agent;
    const scenario = score ? fa.scenario(score) : 'unscored';
    const ins = await fa.insights(runs, run);
    if (!ins.length) {
      skipped.push({ runId: run.id, reason: 'no insight' });
      continue;
    }
    // issue 42: a compound insight is judged fact by fact; filler ("Diagnoses.") is shown apart (skipped), never queued
    for (const i of ins) {
      for (const f of splitAtomicFacts(i.text)) {
        const c = checkability(f.text);
        if (!c.checkable) {
          skipped.push({
            runId: run.id,
            reason: `insight ${i.index + 1} "${f.text.slice(0, 60)}" not judged: ${c.reason}`,
          });
          continue;
        }
        cands.push({
          run,
          model,
          scenario,
          stratum: stratumName(model, scenario),
          key: `${run.id}\u0000${String(i.index).padStart(6, '0')}\u0000${String(f.index).padStart(3, '0')}`,
          index: i.index,
          text: f.statement,
          stepIndex: i.stepIndex,
        });
      }
    }
  }
  if (!cands.length) {
    throw new LoupeInputError(
      'hallucination audit',
      `no selected run has an insight${
        skipped.length
          ? ` (${skipped
              .slice(0, 5)
              .map((s) => `${s.runId}: ${s.reason}`)
              .join('; ')})`
          : ''
      }`,
    );
  }
  const strata = stratifiedSample(
    cands,
    (c) => c.stratum,
    (c) => c.key,
    perStratum,
    seed,
  );
  const items: AnnotationItem[] = [];
  for (const c of interleave(strata)) {
    items.push(
      await ensureHallucinationCheck(ann, c.run, {
        benchmark: c.run.suite,
        runId: c.run.id,
        blockId: c.run.blockId,
        model: c.model,
        scenario: c.scenario,
        index: c.index,
        text: c.text,
        stepIndex: c.stepIndex,
      }),
    );
  }
  const queue = await ann.openQueue({
    kind: 'sampled',
    ...(sel.suite ? { suite: sel.suite } : {}),
    itemIds: items.map((i) => i.id),
    sampling: { title: 'Hallucination audit', perStratum, seed, strata: strata.length },
  });
  return {
    queue,
    items,
    strata: strata.map((s) => ({ stratum: s.stratum, population: s.population, sampled: s.sampled.length })),
    skipped,
  };
}
