/**
 * An expert's split of a claim into atomic facts (issue 43): item kind `fact-split`, one item per run × claim text,
 * the verdict the list of facts. Splitting, merging or editing facts in the annotation panel appends an annotation that
 * supersedes the annotator's previous one (append-only like every expert judgement); scoring with `claims=atomic`
 * takes an expert's split before the judge's (`expertFactSplits`).
 * Source: issue 43 "Atomic claims"; `src/core/eval/atomic-claims.ts`.
 */
import { canonicalJson, sha256 } from '../eval/judges/canonical.ts';
import { LoupeInputError } from '../util/errors.ts';
import { registerItemSchema, type Annotation, type AnnotationItem } from './model.ts';
import type { AnnotationStore } from './store.ts';

/** The item kind of an expert's fact split. */
export const FACT_SPLIT_TASK = 'fact-split';

/** What a fact-split item records: the claim and where it is. */
export interface FactSplitInput {
  benchmark: string;
  runId: string;
  /** `insight` (a DDR message-wise insight) or `claim` (a claim extracted from a report). */
  source: 'insight' | 'claim';
  /** 0-based position of the claim in the run (as the score lists it). */
  index: number;
  text: string;
  /** The split proposed when the item was made (judge or rule). */
  proposed: string[];
}

/** The verdict: the facts, in order. */
export interface FactSplitVerdict {
  facts: string[];
}

registerItemSchema(
  FACT_SPLIT_TASK,
  {
    type: 'object',
    required: ['facts'],
    properties: { facts: { type: 'array', minItems: 1, items: { type: 'string' } } },
  },
  (v) => canonicalJson((v as FactSplitVerdict).facts.map((f) => f.replace(/\s+/g, ' ').trim())),
);

/** The id of the fact-split item of a claim of a run (stable: the run and the claim's text). */
export function factSplitItemId(runId: string, text: string): string {
  return `fs:${sha256(canonicalJson({ runId, text })).slice(0, 16)}`;
}

const MAX_FACTS = 200;
const MAX_FACT_CHARS = 4_000;

/**
 * Checks and normalises an expert's facts: trimmed, blanks dropped, at least one, at most 200 of at most 4,000 characters.
 * @throws LoupeInputError naming the claim when the list is empty or too long.
 */
export function normaliseFacts(facts: readonly string[], subject: string): string[] {
  const out = facts.map((f) => String(f).replace(/\s+/g, ' ').trim()).filter(Boolean);
  if (!out.length) {
    throw new LoupeInputError(
      subject,
      'a split needs at least one fact (to drop a claim, leave its verdicts to the judge)',
    );
  }
  if (out.length > MAX_FACTS) {
    throw new LoupeInputError(subject, `at most ${MAX_FACTS} facts per claim, got ${out.length}`);
  }
  const long = out.findIndex((f) => f.length > MAX_FACT_CHARS);
  if (long >= 0) throw new LoupeInputError(subject, `fact ${long + 1} is longer than ${MAX_FACT_CHARS} characters`);
  return out;
}

/**
 * Records an expert's split of a claim: the item (made once) and an annotation superseding the annotator's previous
 * split of it.
 * @param ann the annotation store; `input` the claim; `facts` the split; `annotator` the expert's name.
 * @returns the item and the new annotation.
 * @throws LoupeInputError for an empty or oversized split, or a run not in the store.
 */
export async function recordFactSplit(
  ann: AnnotationStore,
  input: FactSplitInput,
  facts: readonly string[],
  annotator: string,
  origin = 'panel',
): Promise<{ item: AnnotationItem; annotation: Annotation }> {
  const subject = `claim ${input.index + 1} of run ${input.runId}`;
  const clean = normaliseFacts(facts, subject);
  if (!(await ann.runExists(input.runId))) {
    throw new LoupeInputError(`run ${input.runId}`, 'is not in the store; the split was not recorded');
  }
  const id = factSplitItemId(input.runId, input.text);
  const item = await ann.putItem({
    id,
    subject: {
      kind: 'span',
      runId: input.runId,
      artefact: input.source,
      start: input.index,
      end: input.index,
      quote: input.text.slice(0, 2_000),
    },
    task: FACT_SPLIT_TASK,
    input,
    inputHash: sha256(canonicalJson(input)),
    criterion: null,
    suite: input.benchmark,
    runId: input.runId,
    itemRef: subject,
    suiteVersion: 'unknown',
  });
  const prev = (await ann.annotations(id)).filter((a) => a.annotator === annotator).at(-1);
  const annotation = await ann.annotate({
    itemId: id,
    annotator,
    verdict: { facts: clean },
    supersedes: prev?.id ?? null,
    origin,
  });
  return { item, annotation };
}

/**
 * The newest split of a claim: an adjudicator's final one first, else the newest of any expert's (a superseded
 * annotation never counts).
 * @returns the facts and who split them, or undefined when no expert split the claim.
 */
export async function expertFactSplit(
  ann: AnnotationStore,
  runId: string,
  text: string,
): Promise<{ facts: string[]; annotator: string; at: string } | undefined> {
  return newest(await ann.annotations(factSplitItemId(runId, text)));
}

function newest(list: readonly Annotation[]): { facts: string[]; annotator: string; at: string } | undefined {
  const superseded = new Set(list.map((a) => a.supersedes).filter((x): x is string => !!x));
  const live = list.filter((a) => !superseded.has(a.id)).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  const pick = live.filter((a) => a.final).at(-1) ?? live.at(-1);
  const facts = (pick?.verdict as FactSplitVerdict | undefined)?.facts;
  return pick && Array.isArray(facts) && facts.length
    ? { facts: [...facts], annotator: pick.annotator, at: pick.createdAt }
    : undefined;
}

/**
 * Every expert split of a run's claims, as `decomposeClaims` takes them (claim text → facts).
 * @param ann the annotation store (an unreadable store, e.g. one never annotated, gives an empty map).
 */
export async function expertFactSplits(ann: AnnotationStore, runId: string): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  const items = await ann.listItems({ runIds: [runId], task: FACT_SPLIT_TASK }).catch((): AnnotationItem[] => []);
  if (!items.length) return out;
  const byItem = await ann.annotationsByItem({ runIds: [runId], task: FACT_SPLIT_TASK });
  for (const it of items) {
    const n = newest(byItem.get(it.id) ?? []);
    if (n) out.set((it.input as FactSplitInput).text, n.facts);
  }
  return out;
}
