/**
 * View data of side-by-side review (issue 16), built from the stores with no `vscode` import: the pair a reviewer
 * sees (sides randomised per pair and reviewer, runs hidden until their vote is in, both outputs aligned section by
 * section, every number traced to the notebook cell that computed it) and the ranking view.
 */
import type { AnnotationItem, AnnotationQueue, AnnotationStore } from '../../core/annotations/index.ts';
import { annotatorLabel, currentAnnotations } from '../../core/annotations/model.ts';
import {
  alignReviewDocs,
  reviewDocFromMarkdown,
  reviewDocFromSections,
  traceNumbers,
  TRACE_RULE,
  type ReviewDoc,
} from '../../core/review/align.ts';
import {
  leftSideFor,
  pairOf,
  PAIRWISE_TASK,
  pairwiseRanking,
  playerOf,
  screenChoice,
  type PairwiseVerdict,
  type VoteSource,
} from '../../core/review/pairwise.ts';
import { reviewSourceOf } from './sources.ts';
import type { RunStore } from '../../core/store/types.ts';
import { pairForkDiff } from '../runs/fork-diff.ts';
import { findBenchmark } from '../../core/benchmarks/registry.ts';
import type { ItemOutcome } from '../../core/benchmarks/types.ts';
import { LoupeInputError } from '../../core/util/errors.ts';
import { latestRunScore } from '../results/outcomes.ts';
import type {
  PairQuestionTruth,
  PairView,
  RankingState,
  ReviewNumberView,
  ReviewQueueView,
  ReviewRowView,
  ReviewSideView,
} from '../../protocol/review.ts';

/** A run's review document with its numbers traced to its cells. */
async function docOf(runs: RunStore, runId: string, runsRoot: string | null): Promise<ReviewDoc> {
  const { source } = await reviewSourceOf(runs, runId, runsRoot);
  const doc = !source
    ? reviewDocFromMarkdown(runId, '')
    : 'markdown' in source
      ? reviewDocFromMarkdown(runId, source.markdown)
      : reviewDocFromSections(runId, source.sections);
  if (doc.numbers.length) traceNumbers(doc, await runs.getCells(runId));
  return doc;
}

/** Header of a review queue: progress, and pairs voted per reviewer labelled with their database roles (team store). */
export async function reviewQueueView(
  ann: AnnotationStore,
  q: AnnotationQueue,
  annotator: string,
): Promise<ReviewQueueView> {
  const p = await ann.progress(q.id);
  const byReviewer = Object.entries(p.byAnnotator).map(([w, n]) => ({
    label: annotatorLabel(w, p.roles[w]),
    voted: n,
  }));
  return { queueId: q.id, name: q.name, total: p.total, done: p.done, annotator, reviewers: q.reviewers, byReviewer };
}

/**
 * The pair as `annotator` sees it: left/right from {@link leftSideFor}, runs revealed only when they have voted.
 * @param runsRoot the runs folder this user configured (issue 36: run files are read from a run folder inside it, else
 *   from the store's copy; null, the default: the store's copy only).
 * @param blind the queue is blind: ground truth only after this reviewer's vote.
 * @returns the view, and the run ids behind the screen sides (for opening cells).
 */
export async function pairView(
  ann: AnnotationStore,
  runs: RunStore,
  item: AnnotationItem,
  annotator: string,
  runsRoot: string | null = null,
  blind = true,
): Promise<{ view: PairView; sides: { left: string; right: string } }> {
  const p = pairOf(item);
  const shownLeft = leftSideFor(item.id, annotator);
  const leftRun = shownLeft === 'A' ? p.runA : p.runB;
  const rightRun = shownLeft === 'A' ? p.runB : p.runA;
  const [ld, rd] = [await docOf(runs, leftRun, runsRoot), await docOf(runs, rightRun, runsRoot)];
  const mine = currentAnnotations(await ann.annotations(item.id)).byAnnotator.get(annotator);
  const v = mine?.verdict as PairwiseVerdict | undefined;
  const reveal = async (runId: string): Promise<ReviewSideView['revealed']> => {
    if (!v) return null;
    const r = await runs.getRun(runId);
    if (!r) return { runId, agent: '?', model: null, player: '(run deleted)' };
    const pl = playerOf(r);
    return { runId, agent: r.agent, model: r.model, player: pl.label };
  };
  const side = async (title: string, d: ReviewDoc, runId: string): Promise<ReviewSideView> => ({
    title,
    empty: d.empty,
    revealed: await reveal(runId),
    numbers: { total: d.numbers.length, traced: d.numbers.filter((n) => n.source).length },
    figures: d.figures.length,
  });
  const numbers: Record<string, ReviewNumberView> = {};
  for (const n of ld.numbers) numbers[`L${n.id}`] = { raw: n.raw, label: n.label, cell: n.source?.seq ?? null };
  for (const n of rd.numbers) numbers[`R${n.id}`] = { raw: n.raw, label: n.label, cell: n.source?.seq ?? null };
  const rows: ReviewRowView[] = alignReviewDocs(ld, rd).map((r) => ({
    key: r.key,
    left: r.a ? { title: r.a.title, html: sideHtml(r.a.html, 'L') } : null,
    right: r.b ? { title: r.b.title, html: sideHtml(r.b.html, 'R') } : null,
    differing: r.differing.flatMap((d) => [`L${d.a}`, `R${d.b}`]),
  }));
  const view: PairView = {
    itemId: item.id,
    blockId: p.blockId,
    suite: p.suite,
    criteria: p.criteria,
    left: await side('Output A', ld, leftRun),
    right: await side('Output B', rd, rightRun),
    rows,
    numbers,
    vote: v
      ? {
          criteria: Object.fromEntries(
            v.criteria.map((c) => [c.criterion, screenChoice(c.choice, v.shownLeft ?? shownLeft)]),
          ),
          overall: screenChoice(v.overall, v.shownLeft ?? shownLeft),
          rationale: v.rationale,
        }
      : null,
    traceRule: TRACE_RULE,
    forkDiff: await forkDiffBeside(runs, p.runA, p.runB, !!v),
    groundTruth: !findBenchmark(p.suite)?.presentation.itemOutcomes ? 'none' : v || !blind ? 'available' : 'after-vote',
  };
  return { view, sides: { left: leftRun, right: rightRun } };
}

/**
 * The fork diff shown beside the vote (issue 43): for a pair related by a fork, its relation and step always, the diff
 * itself (which names parent and fork, their answers and scores) only once the reviewer has voted.
 */
async function forkDiffBeside(
  runs: RunStore,
  runA: string,
  runB: string,
  voted: boolean,
): Promise<PairView['forkDiff']> {
  const d = await pairForkDiff(runs, runA, runB);
  return d ? { view: voted ? d : null, relation: d.relation, forkStep: d.forkStep } : null;
}

/** Number ids of one side are prefixed (`L`/`R`) so both sides' numbers live in one map. */
function sideHtml(html: string, prefix: 'L' | 'R'): string {
  return html.replace(/data-num="([^"]+)"/g, (_m, id: string) => `data-num="${prefix}${id}"`);
}

/**
 * The ranking view of one benchmark, criterion and vote source (Bradley–Terry with bootstrap CIs, win-rate matrix).
 * @param o `suite` null: the benchmark with the most pairs; a criterion that benchmark's pairs do not have falls back to `overall`.
 */
export async function rankingState(
  ann: AnnotationStore,
  runs: RunStore,
  o: { suite?: string | null; criterion?: string; source?: VoteSource; title: string },
): Promise<RankingState> {
  const counts = new Map<string, number>();
  for (const i of await ann.listItems({ task: PAIRWISE_TASK })) {
    if (i.suite) counts.set(i.suite, (counts.get(i.suite) ?? 0) + 1);
  }
  const suites = [...counts.keys()].sort();
  const suite =
    o.suite && counts.has(o.suite)
      ? o.suite
      : ([...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? null);
  const base = { ...(suite ? { suite } : {}), source: o.source ?? ('human' as VoteSource) };
  let r;
  try {
    r = await pairwiseRanking(ann, runs, { ...base, criterion: o.criterion ?? 'overall' });
  } catch {
    r = await pairwiseRanking(ann, runs, { ...base, criterion: 'overall' });
  }
  const label = new Map(r.rows.map((x) => [x.player, x.label]));
  return {
    title: o.title,
    suite,
    suites,
    components: r.components.map((c) => c.map((p) => label.get(p) ?? p)),
    criterion: r.criterion,
    source: r.source,
    criteria: r.criteria,
    rows: r.rows.map((x) => ({
      player: x.player,
      label: x.label,
      rating: x.rating,
      ciLow: x.ciLow,
      ciHigh: x.ciHigh,
      battles: x.battles,
      wins: x.wins,
      ties: x.ties,
    })),
    votes: r.votes,
    bothBad: r.bothBad,
    matrix: { labels: r.matrix.labels, rate: r.matrix.rate, battles: r.matrix.battles },
    judgeHuman: r.judgeHuman,
    positionConsistency: r.positionConsistency,
    options: r.options,
    reviewers: r.reviewers.map((x) => ({ label: x.label, votes: x.votes })),
  };
}

/**
 * Ground truth beside each side of a pair (issue 43, opt-in per question): the questions of the pair's benchmark items
 * (from the stored scores of both runs, `presentation.itemOutcomes`), or one question with what each screen side
 * answered and the expected value.
 * @param blind the queue is blind: refused until `annotator` has voted on the pair.
 * @throws LoupeInputError before the vote in a blind queue, for a benchmark without per-item outcomes, or an unknown question.
 */
export async function pairGroundTruth(
  ann: AnnotationStore,
  runs: RunStore,
  item: AnnotationItem,
  annotator: string,
  blind: boolean,
  ref?: string,
): Promise<{ questions: Array<{ ref: string; question: string }>; truth: PairQuestionTruth | null }> {
  const p = pairOf(item);
  const items = findBenchmark(p.suite)?.presentation.itemOutcomes;
  if (!items) throw new LoupeInputError('ground truth', `${p.suite} scores no per-question outcomes`);
  const voted = currentAnnotations(await ann.annotations(item.id)).byAnnotator.has(annotator);
  if (blind && !voted) {
    throw new LoupeInputError('ground truth', 'this queue is blind: the ground truth is shown only after your vote');
  }
  const shownLeft = leftSideFor(item.id, annotator);
  const [leftRun, rightRun] = shownLeft === 'A' ? [p.runA, p.runB] : [p.runB, p.runA];
  const outcomes = async (runId: string) => {
    const s = await latestRunScore(runs, runId);
    return new Map((s && !s.score.error ? items(s.score) : []).map((o) => [o.ref, o]));
  };
  const [l, r] = [await outcomes(leftRun), await outcomes(rightRun)];
  const questions: Array<{ ref: string; question: string }> = [];
  const seen = new Set<string>();
  for (const o of [...l.values(), ...r.values()]) {
    if (!seen.has(o.ref)) {
      seen.add(o.ref);
      questions.push({ ref: o.ref, question: o.question });
    }
  }
  if (ref === undefined) return { questions, truth: null };
  const any = l.get(ref) ?? r.get(ref);
  if (!any) throw new LoupeInputError('question', `no question '${ref}' in the scores of this pair`);
  const side = (m: Map<string, ItemOutcome>) => {
    const o = m.get(ref);
    return o ? { given: o.given, verdict: o.verdict } : null;
  };
  return { questions, truth: { ref, question: any.question, expected: any.expected, left: side(l), right: side(r) } };
}
