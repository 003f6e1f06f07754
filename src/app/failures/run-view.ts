/**
 * The run the Failure Analysis panel shows (issue 19), host-neutral: its steps (each with the items whose answer it
 * recorded, never cut), its texts to tag, its tags, and — when a failed item is attached, from "Tag failure" or as the
 * case of a queue — the report pane and the step list opened on that item (issue 42 defect 8: a case about q2 shows
 * q2's text and selects the step that answered q2, in run mode and queue mode alike).
 */
import type { AnnotationStore } from '../../core/annotations/index.ts';
import { findBenchmark } from '../../core/benchmarks/registry.ts';
import { FAILURE_CASE_TASK, sentenceOffsets, type FailureCaseInput } from '../../core/failures/index.ts';
import { runFolderOf } from '../../core/store/run-folder.ts';
import type { RunStore } from '../../core/store/types.ts';
import type { StepSummaryRecord } from '../../core/store/types.ts';
import { artefactOfItem, failureTagViews } from './failure-tags.ts';
import type { FailureArtefact, FailureRunView } from '../../protocol/failures.ts';

/**
 * A run's texts to tag spans on, through its benchmark's review source (a report, a query's answer, the insights).
 * @param runsRoot the runs folder the user configured (null: the store's copy only, issue 36).
 * @returns texts in pane order; [] for an unknown run or benchmark, or a run with nothing to show.
 */
export async function failureArtefacts(
  store: RunStore,
  runId: string,
  runsRoot: string | null,
): Promise<FailureArtefact[]> {
  const run = await store.getRun(runId);
  const def = run ? findBenchmark(run.suite) : undefined;
  if (!run || !def) return [];
  const src = await def.review.sectionsOf(store, run, await runFolderOf(store, run, runsRoot)).catch(() => null);
  if (!src) return [];
  const list = 'markdown' in src ? [{ key: 'report', title: 'Report', markdown: src.markdown }] : src.sections;
  return list
    .filter((s) => s.markdown.trim())
    .map((s) => ({ name: s.key, title: s.title, text: s.markdown, sentences: sentenceOffsets(s.markdown) }));
}

/**
 * Short forms of item ids that share a long prefix (`NHANES_NCHS Data Brief No. 508_q2` → `q2` beside `…_q3`): the
 * common prefix up to its last `_`, space, `.`, `-`, `/` or `:` is dropped; an id left empty, or a lone id, stays whole.
 * @returns id → short form.
 */
export function shortItemRefs(ids: readonly string[]): Map<string, string> {
  const uniq = [...new Set(ids)];
  let p = uniq.length > 1 ? uniq[0]! : '';
  for (const id of uniq) while (p && !id.startsWith(p)) p = p.slice(0, -1);
  const cut = Math.max(...['_', ' ', '.', '-', '/', ':'].map((c) => p.lastIndexOf(c))) + 1;
  return new Map(uniq.map((id) => [id, id.slice(cut) || id]));
}

/** One line of a step for the step list: the items it answered first (as given: see {@link shortItemRefs}), then its first call, cut at 100 characters. */
export function failureStepSummary(
  s: Pick<StepSummaryRecord, 'toolNames' | 'firstArguments' | 'content'>,
  answered: readonly string[] = [],
): string {
  const head = answered.length ? `answers ${answered.join(', ')} · ` : '';
  const c = s.toolNames[0];
  if (c) return `${head}${c} ${(s.firstArguments ?? '').replace(/\s+/g, ' ').slice(0, 100)}`;
  return `${head}${s.content.replace(/\s+/g, ' ').slice(0, 100) || '(message)'}`;
}

/**
 * The Failure Analysis view of a run.
 * @param o `caseItemId` the failure case attached (run mode) or being worked (queue mode): its ref picks the text the
 *   report pane opens on and, unless `focusStep` is given, the step that recorded its (last) answer; `taxonomy` the
 *   fallback taxonomy id when the benchmark has none.
 * @throws Error when the run is not in the store.
 */
export async function failureRunView(
  store: RunStore,
  ann: AnnotationStore,
  runId: string,
  o: { caseItemId?: string; focusStep?: number; runsRoot: string | null; taxonomy: string },
): Promise<FailureRunView> {
  const run = await store.getRun(runId);
  if (!run) throw new Error(`Run ${runId} is no longer in the store.`);
  const answers = await store.getAnswers(runId);
  const byStep = new Map<number, string[]>();
  const stepOfRef = new Map<string, number>();
  for (const a of answers) {
    byStep.set(a.stepIndex, [...new Set([...(byStep.get(a.stepIndex) ?? []), a.queryId])]);
    stepOfRef.set(a.queryId, a.stepIndex);
  }
  // the step list is narrow: it names each item by what tells it apart from the run's other items (q2), first
  const short = shortItemRefs(answers.map((a) => a.queryId));
  const steps = (await store.getStepSummaries(runId)).map((s) => ({
    index: s.index,
    summary: failureStepSummary(
      s,
      (byStep.get(s.index) ?? []).map((q) => short.get(q) ?? q),
    ),
    tools: s.toolNames,
    error: s.anyError,
    answers: byStep.get(s.index) ?? [],
  }));
  const tags = await failureTagViews(ann, runId);
  const def = findBenchmark(run.suite);
  const caseItem = o.caseItemId ? await ann.getItem(o.caseItemId) : undefined;
  const attached: FailureRunView['attached'] =
    caseItem?.task === FAILURE_CASE_TASK && caseItem.runId === runId
      ? (({ ref, question, detail }: FailureCaseInput) => ({ ref, question, detail }))(
          caseItem.input as FailureCaseInput,
        )
      : undefined;
  const artefacts = await failureArtefacts(store, runId, o.runsRoot);
  // the report pane opens on the attached item's text (a LongDA query's answer), not the first
  const focusArtefact = attached ? artefactOfItem(artefacts, attached.ref) : -1;
  const focusStep = o.focusStep ?? (attached ? stepOfRef.get(attached.ref) : undefined);
  // no text of the run is the item's own: say why, so the pane's first text is not taken for it
  if (attached && focusArtefact < 0) {
    attached.note =
      answers.length && !stepOfRef.has(attached.ref)
        ? `The run recorded no answer to ${attached.ref}.`
        : `No text of this run is ${attached.ref}'s own: it is judged on the whole output.`;
  }
  return {
    ...(attached ? { attached } : {}),
    ...(focusArtefact >= 0 ? { focusArtefact } : {}),
    runId,
    suite: run.suite,
    blockId: run.blockId,
    model: run.model ?? run.agent,
    steps,
    artefacts,
    tags,
    taxonomy: def?.failureAnalysis?.taxonomy.id ?? o.taxonomy,
    ...(focusStep !== undefined ? { focusStep } : {}),
  };
}
