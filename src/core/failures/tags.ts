/**
 * Failure tags as annotations (issue 19). Three item kinds on the one annotation store:
 * - `failure-tag`: a step or step range of a trajectory, or a text span of a report / insight, tagged with one or
 *   more classes of a taxonomy and a severity (the annotation's note says why);
 * - `failure-case`: an item a run's score judged incorrect (DDR §6), served with its trajectory; the verdict names
 *   the classes that explain the failure (or says the judge was wrong);
 * - `hallucination-check`: an insight, judged for whether its facts are correct and derivable from what the agent
 *   saw (DDR §7: hallucinated = correct but not derivable).
 * Source: issue 19; DDR-Bench paper §6–7; `../shared/spec/annotation.md`.
 */
import { canonicalJson, sha256 } from '../eval/judges/canonical.ts';
import {
  registerItemSchema,
  currentAnnotations,
  type Annotation,
  type AnnotationItem,
  type EvidenceRef,
} from '../annotations/model.ts';
import { suiteVersionOf, type AnnotationStore } from '../annotations/store.ts';
import type { RunStore } from '../store/types.ts';
import type { RunRecord } from '../store/records.ts';
import { LoupeInputError } from '../util/errors.ts';
import { checkClasses, type Taxonomy } from './taxonomy.ts';

export const FAILURE_TAG_TASK = 'failure-tag';
export const FAILURE_CASE_TASK = 'failure-case';
export const HALLUCINATION_CHECK_TASK = 'hallucination-check';

/** How bad a failure is: `minor` (the result survives), `major` (the result is wrong), `critical` (nothing usable). */
export type Severity = 'minor' | 'major' | 'critical';
export const SEVERITIES: readonly Severity[] = ['minor', 'major', 'critical'];

/** Verdict of a failure tag. */
export interface FailureTagVerdict {
  taxonomy: string;
  /** Class ids, in the taxonomy's order (at least one). */
  classes: string[];
  severity: Severity;
}

/** Verdict of a failure case: the classes explaining it, or `judgeWrong` when the item was in fact not a failure. */
export interface FailureCaseVerdict {
  taxonomy: string;
  classes: string[];
  severity?: Severity;
  judgeWrong?: boolean;
}

/** Verdict of a hallucination check (DDR §7). */
export interface HallucinationVerdict {
  /** Every fact of the insight is correct. */
  correct: boolean;
  /** Every fact can be derived from what the agent saw (its prompt, calls and results). */
  derivable: boolean;
}

/** What a failure tag's item records besides its subject. */
export interface FailureTagInput {
  taxonomy: string;
  /** The failure case the tag was made for, if any (the trajectory was opened from it). */
  caseItemId?: string;
  /** Span tags: the 0-based sentences the span touches and the artefact's sentence count (agreement units). */
  sentences?: { first: number; last: number; count: number };
}

/** What a failure case's item records. */
export interface FailureCaseInput {
  benchmark: string;
  runId: string;
  blockId: string;
  model: string;
  scenario: string;
  ref: string;
  question: string;
  detail: string;
  taxonomy: string;
}

/** What a hallucination check's item records. */
export interface HallucinationInput {
  benchmark: string;
  runId: string;
  blockId: string;
  model: string;
  scenario: string;
  index: number;
  text: string;
  stepIndex: number | null;
}

const severitySchema = { type: 'string' as const, enum: SEVERITIES };
const classesLabel = (v: unknown) => [...((v as { classes?: string[] }).classes ?? [])].sort().join('|') || 'none';

registerItemSchema(
  FAILURE_TAG_TASK,
  {
    type: 'object',
    required: ['taxonomy', 'classes', 'severity'],
    properties: {
      taxonomy: { type: 'string' },
      classes: { type: 'array', minItems: 1, items: { type: 'string' } },
      severity: severitySchema,
    },
  },
  classesLabel,
);

registerItemSchema(
  FAILURE_CASE_TASK,
  {
    type: 'object',
    required: ['taxonomy', 'classes'],
    properties: {
      taxonomy: { type: 'string' },
      classes: { type: 'array', items: { type: 'string' } },
      severity: severitySchema,
      judgeWrong: { type: 'boolean' },
    },
  },
  (v) => ((v as FailureCaseVerdict).judgeWrong ? 'judge-wrong' : classesLabel(v)),
);

registerItemSchema(
  HALLUCINATION_CHECK_TASK,
  {
    type: 'object',
    required: ['correct', 'derivable'],
    properties: { correct: { type: 'boolean' }, derivable: { type: 'boolean' } },
  },
  (v) => String(isHallucinated(v as HallucinationVerdict)),
);

/** DDR §7: an insight is hallucinated when its facts are correct but not derivable from the inputs. */
export function isHallucinated(v: HallucinationVerdict): boolean {
  return v.correct && !v.derivable;
}

const idOf = (prefix: string, x: unknown) => `${prefix}:${sha256(canonicalJson(x)).slice(0, 16)}`;

async function runOf(runs: RunStore, runId: string): Promise<RunRecord> {
  const r = await runs.getRun(runId);
  if (!r) throw new LoupeInputError(`run ${runId}`, 'is not in the store (deleted?); nothing was tagged');
  return r;
}

/** Common fields of a new tag. */
export interface TagCommon {
  taxonomy: Taxonomy;
  classes: readonly string[];
  severity: Severity;
  note?: string;
  annotator: string;
  caseItemId?: string;
  origin?: string;
  queueId?: string;
}

async function recordTag(
  ann: AnnotationStore,
  item: Omit<AnnotationItem, 'schemaVersion' | 'createdAt'>,
  t: TagCommon,
  classes: string[],
  evidence: EvidenceRef[],
): Promise<{ item: AnnotationItem; annotation: Annotation }> {
  if (!SEVERITIES.includes(t.severity)) {
    throw new LoupeInputError(
      `${item.itemRef}`,
      `severity must be one of ${SEVERITIES.join(', ')}, got '${String(t.severity)}'`,
    );
  }
  const stored = await ann.putItem(item);
  const mine = currentAnnotations(await ann.annotations(stored.id)).byAnnotator.get(t.annotator.trim());
  const verdict: FailureTagVerdict = { taxonomy: t.taxonomy.id, classes, severity: t.severity };
  const annotation = await ann.annotate({
    itemId: stored.id,
    annotator: t.annotator,
    verdict,
    evidence,
    note: t.note ?? null,
    supersedes: mine?.id ?? null,
    origin: t.origin ?? 'cli',
    ...(t.queueId ? { queueId: t.queueId } : {}),
  });
  return { item: stored, annotation };
}

/**
 * Tags a step or a step range of a run's trajectory (0-based, inclusive). Tagging the same range again (same
 * annotator, same taxonomy) supersedes the earlier tag.
 * @throws LoupeInputError for a run not in the store, a range that is not 0 ≤ from ≤ to, a step the run does not
 *   have (naming it and the run's step count), no class or a class missing from the taxonomy, a bad severity.
 */
export async function tagSteps(
  ann: AnnotationStore,
  runs: RunStore,
  t: TagCommon & { runId: string; from: number; to: number },
): Promise<{ item: AnnotationItem; annotation: Annotation }> {
  const run = await runOf(runs, t.runId);
  const where =
    t.from === t.to ? `step ${t.from + 1} of run ${t.runId}` : `steps ${t.from + 1}–${t.to + 1} of run ${t.runId}`;
  if (!Number.isInteger(t.from) || !Number.isInteger(t.to) || t.from < 0 || t.to < t.from) {
    throw new LoupeInputError(where, 'a step range needs whole numbers with 0 ≤ from ≤ to');
  }
  for (const i of new Set([t.from, t.to])) {
    if (!(await runs.getStep(t.runId, i))) {
      const n = (await runs.getStepSummaries(t.runId)).length;
      throw new LoupeInputError(
        where,
        `step ${i + 1} does not exist (the run has ${n} step${n === 1 ? '' : 's'}); nothing was tagged`,
      );
    }
  }
  const classes = checkClasses(t.taxonomy, t.classes, where);
  const subject = { kind: 'step' as const, runId: t.runId, from: t.from, to: t.to };
  const input: FailureTagInput = { taxonomy: t.taxonomy.id, ...(t.caseItemId ? { caseItemId: t.caseItemId } : {}) };
  const evidence: EvidenceRef[] = [];
  for (let i = t.from; i <= t.to && evidence.length < 50; i++) evidence.push({ kind: 'step', runId: t.runId, step: i });
  return recordTag(
    ann,
    {
      id: idOf('ft', { subject, taxonomy: t.taxonomy.id }),
      subject,
      task: FAILURE_TAG_TASK,
      input,
      inputHash: null,
      criterion: t.taxonomy.id,
      suite: run.suite,
      runId: run.id,
      itemRef: where,
      suiteVersion: suiteVersionOf(JSON.stringify(run.dataChecksums ?? {})),
    },
    t,
    classes,
    evidence,
  );
}

/**
 * The sentences of a text (Intl.Segmenter, sentence granularity) as [start, end) character offsets, trailing white
 * space excluded.
 * Sentences are the agreement units of report tags.
 */
export function sentenceOffsets(text: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const s of new Intl.Segmenter('en', { granularity: 'sentence' }).segment(text)) {
    // without the white space that follows the sentence (a tag on the sentence quotes just the sentence)
    if (s.segment.trim()) out.push([s.index, s.index + s.segment.trimEnd().length]);
  }
  return out;
}

/**
 * Tags a text span of a run artefact (the report, an insight: `artefact` names it as the review view does).
 * @param t.text the artefact's full text as shown (offsets are checked against it and the quote is taken from it).
 * @throws LoupeInputError for a run not in the store, offsets outside the text or an empty span, a class missing
 *   from the taxonomy, a bad severity.
 */
export async function tagSpan(
  ann: AnnotationStore,
  runs: RunStore,
  t: TagCommon & { runId: string; artefact: string; text: string; start: number; end: number },
): Promise<{ item: AnnotationItem; annotation: Annotation }> {
  const run = await runOf(runs, t.runId);
  const where = `${t.artefact} of run ${t.runId} (characters ${t.start}–${t.end})`;
  if (
    !Number.isInteger(t.start) ||
    !Number.isInteger(t.end) ||
    t.start < 0 ||
    t.end > t.text.length ||
    t.end <= t.start
  ) {
    throw new LoupeInputError(where, `a span needs 0 ≤ start < end ≤ ${t.text.length} (the text's length)`);
  }
  const quote = t.text.slice(t.start, t.end);
  if (!quote.trim()) throw new LoupeInputError(where, 'the span holds only white space; select some text');
  const classes = checkClasses(t.taxonomy, t.classes, where);
  const sents = sentenceOffsets(t.text);
  const touched = sents.map(([a, b], i) => (a < t.end && b > t.start ? i : -1)).filter((i) => i >= 0);
  const subject = { kind: 'span' as const, runId: t.runId, artefact: t.artefact, start: t.start, end: t.end, quote };
  const input: FailureTagInput = {
    taxonomy: t.taxonomy.id,
    ...(t.caseItemId ? { caseItemId: t.caseItemId } : {}),
    sentences: { first: touched[0] ?? 0, last: touched[touched.length - 1] ?? 0, count: Math.max(1, sents.length) },
  };
  return recordTag(
    ann,
    {
      id: idOf('ft', { runId: t.runId, artefact: t.artefact, start: t.start, end: t.end, taxonomy: t.taxonomy.id }),
      subject,
      task: FAILURE_TAG_TASK,
      input,
      inputHash: null,
      criterion: t.taxonomy.id,
      suite: run.suite,
      runId: run.id,
      itemRef: `“${quote.length > 60 ? `${quote.slice(0, 57)}…` : quote}” in ${t.artefact}`,
      suiteVersion: suiteVersionOf(JSON.stringify(run.dataChecksums ?? {})),
    },
    t,
    classes,
    [{ kind: 'span', runId: t.runId, artefact: t.artefact, start: t.start, end: t.end, quote }],
  );
}

/**
 * Records an annotator's verdict on a failure case (the item served by the failure-analysis queue).
 * @throws LoupeInputError for an item that is not a failure case, classes missing from its taxonomy, no class
 *   unless `judgeWrong`, a bad severity.
 */
export async function recordFailureCase(
  ann: AnnotationStore,
  taxonomy: Taxonomy,
  v: {
    itemId: string;
    annotator: string;
    classes: readonly string[];
    severity?: Severity;
    judgeWrong?: boolean;
    note?: string;
    queueId?: string;
    origin?: string;
  },
): Promise<Annotation> {
  const item = await ann.getItem(v.itemId);
  if (!item || item.task !== FAILURE_CASE_TASK) throw new LoupeInputError(`item ${v.itemId}`, 'is not a failure case');
  const input = item.input as FailureCaseInput;
  if (input.taxonomy !== taxonomy.id) {
    throw new LoupeInputError(`item ${v.itemId}`, `is tagged with taxonomy ${input.taxonomy}, not ${taxonomy.id}`);
  }
  const classes =
    v.judgeWrong && !v.classes.length ? [] : checkClasses(taxonomy, v.classes, `${input.ref} of run ${input.runId}`);
  if (v.severity !== undefined && !SEVERITIES.includes(v.severity)) {
    throw new LoupeInputError(`item ${v.itemId}`, `severity must be one of ${SEVERITIES.join(', ')}`);
  }
  const mine = currentAnnotations(await ann.annotations(item.id)).byAnnotator.get(v.annotator.trim());
  const verdict: FailureCaseVerdict = {
    taxonomy: taxonomy.id,
    classes,
    ...(v.severity ? { severity: v.severity } : {}),
    ...(v.judgeWrong ? { judgeWrong: true } : {}),
  };
  return ann.annotate({
    itemId: item.id,
    annotator: v.annotator,
    verdict,
    note: v.note ?? null,
    supersedes: mine?.id ?? null,
    origin: v.origin ?? 'cli',
    ...(v.queueId ? { queueId: v.queueId } : {}),
  });
}

/** Records an annotator's hallucination check of an insight. @throws LoupeInputError for an item that is not one. */
export async function recordHallucinationCheck(
  ann: AnnotationStore,
  v: {
    itemId: string;
    annotator: string;
    correct: boolean;
    derivable: boolean;
    note?: string;
    queueId?: string;
    origin?: string;
  },
): Promise<Annotation> {
  const item = await ann.getItem(v.itemId);
  if (!item || item.task !== HALLUCINATION_CHECK_TASK) {
    throw new LoupeInputError(`item ${v.itemId}`, 'is not a hallucination check');
  }
  const mine = currentAnnotations(await ann.annotations(item.id)).byAnnotator.get(v.annotator.trim());
  return ann.annotate({
    itemId: item.id,
    annotator: v.annotator,
    verdict: { correct: v.correct, derivable: v.derivable } satisfies HallucinationVerdict,
    note: v.note ?? null,
    supersedes: mine?.id ?? null,
    origin: v.origin ?? 'cli',
    ...(v.queueId ? { queueId: v.queueId } : {}),
  });
}

/** Creates (or returns) the failure-case item of a failed item of a run. */
export async function ensureFailureCase(
  ann: AnnotationStore,
  run: RunRecord,
  steps: number,
  input: FailureCaseInput,
): Promise<AnnotationItem> {
  const id = idOf('fc', { runId: run.id, ref: input.ref, taxonomy: input.taxonomy });
  const have = await ann.getItem(id);
  if (have) return have;
  return ann.putItem({
    id,
    subject: { kind: 'step', runId: run.id, from: 0, to: Math.max(0, steps - 1) },
    task: FAILURE_CASE_TASK,
    input,
    inputHash: sha256(canonicalJson(input)).slice(0, 32),
    criterion: null,
    suite: run.suite,
    runId: run.id,
    itemRef: `${input.ref}: ${input.question.length > 80 ? `${input.question.slice(0, 77)}…` : input.question}`,
    suiteVersion: suiteVersionOf(JSON.stringify(run.dataChecksums ?? {})),
  });
}

/** Creates (or returns) the hallucination-check item of an insight of a run. */
export async function ensureHallucinationCheck(
  ann: AnnotationStore,
  run: RunRecord,
  input: HallucinationInput,
): Promise<AnnotationItem> {
  const id = idOf('hc', { runId: run.id, index: input.index, text: sha256(input.text) });
  const have = await ann.getItem(id);
  if (have) return have;
  return ann.putItem({
    id,
    subject: {
      kind: 'span',
      runId: run.id,
      artefact: `insight:${input.index}`,
      start: 0,
      end: input.text.length,
      quote: input.text.slice(0, 200),
    },
    task: HALLUCINATION_CHECK_TASK,
    input,
    inputHash: sha256(canonicalJson(input)).slice(0, 32),
    criterion: null,
    suite: run.suite,
    runId: run.id,
    itemRef: `insight ${input.index + 1}: ${input.text.length > 80 ? `${input.text.slice(0, 77)}…` : input.text}`,
    suiteVersion: suiteVersionOf(JSON.stringify(run.dataChecksums ?? {})),
  });
}
