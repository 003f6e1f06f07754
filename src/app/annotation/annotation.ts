/**
 * View model of the expert annotation panel: the controls of each task's verdict (the judge's schema), the item
 * as the expert reads it (claim, criterion with its rubric, the agent's report in paragraphs), the evidence of its
 * run (trajectory steps, notebook cells whose output holds a number the item mentions, documentation pages
 * searched), the annotator's current verdict, and — once submitted or when the queue is not blind — the other
 * verdicts. Source: issue 14 "Judge one item", "Blind by default".
 */
import type {
  AnnotationItemView,
  AnnotationState,
  CellEvidence,
  ClaimFactsView,
  DocEvidence,
  ItemField,
  OtherVerdict,
  QueueView,
  StepEvidence,
  VerdictControl,
} from '../../protocol/annotation.ts';
import {
  annotatorLabel,
  currentAnnotations,
  labelOf,
  resolveItem,
  validateVerdict,
  type AnnotationItem,
  type AnnotationQueue,
  type AnnotationStore,
} from '../../core/annotations/index.ts';
import { taskDef } from '../../core/eval/judges/tasks.ts';
import type { JudgeTaskName } from '../../core/eval/judges/types.ts';
import type { RunStore } from '../../core/store/run-store.ts';
import { LoupeInputError } from '../../core/util/errors.ts';
import { runSearchHistory } from '../docsearch/docsearch-service.ts';
import { factTerms, splitAtomicFacts, termsMentioned } from '../../core/eval/atomic-facts.ts';
import { linkFacts, stepTextOf } from '../../core/eval/atomic-claims.ts';
import { expertFactSplit, recordFactSplit, type FactSplitInput } from '../../core/annotations/index.ts';

const yn = (field: string, label: string, yes: string, no: string): VerdictControl => ({
  field,
  label,
  options: [
    { value: true, label: yes, key: 'y' },
    { value: false, label: no, key: 'n' },
  ],
});
const scale = (field: string, label: string, rubric?: readonly string[]): VerdictControl => ({
  field,
  label,
  options: [1, 2, 3, 4, 5].map((n) => ({
    value: n,
    label: String(n),
    key: String(n),
    ...(rubric?.[n - 1] ? { hint: rubric[n - 1] } : {}),
  })),
});
const labels = (field: string, label: string, xs: Array<[string, string]>): VerdictControl => ({
  field,
  label,
  options: xs.map(([value, l], i) => ({ value, label: l, key: String(i + 1) })),
});

const TITLES: Record<string, string> = {
  'claim-support': 'Is the claim supported by the sources?',
  'semantic-match': 'Do the two name the same thing?',
  hallucination: 'Does the insight state facts the agent could not have seen?',
  'checklist-support': 'Do the findings contain the checklist fact?',
  'trend-answer': 'What trend do the findings report?',
  'pairwise-novelty': 'Which insight set is more novel?',
  'checklist-score': 'Score the response on this criterion (1–5)',
  'figure-quality': 'Rate the generated figure (four 1–5 scales)',
};

/**
 * The verdict controls of a task: exactly the choice fields of its schema.
 * @param input the item's input (checklist-score rubrics become the 1–5 hints).
 * @throws LoupeInputError for a task without controls.
 */
export function verdictControls(task: string, input: unknown): VerdictControl[] {
  const i = (input ?? {}) as Record<string, unknown>;
  switch (task) {
    case 'claim-support':
      return [yn('supported', 'Supported', 'Supported', 'Not supported')];
    case 'semantic-match':
      return [yn('match', 'Same thing', 'Match', 'No match')];
    case 'hallucination':
      return [yn('hallucinated', 'Hallucinated', 'Hallucinated', 'Grounded')];
    case 'checklist-support':
      return [
        labels('label', 'Label', [
          ['CORRECT_INFO', 'Correct info'],
          ['INCORRECT_INFO', 'Incorrect info'],
          ['INSUFFICIENT_INFO', 'Insufficient info'],
        ]),
      ];
    case 'trend-answer':
      return [
        labels('answer', 'Answer', [
          ['improved', 'Improved'],
          ['worsened', 'Worsened'],
          ['same', 'Same'],
          ['no_idea', 'No idea'],
        ]),
      ];
    case 'pairwise-novelty':
      return [
        labels('winner', 'More novel', [
          ['A', 'A'],
          ['B', 'B'],
          ['TIE', 'Tie'],
        ]),
      ];
    case 'checklist-score':
      return [scale('score', 'Score', Array.isArray(i.rubric) ? (i.rubric as string[]) : undefined)];
    case 'figure-quality':
      return [
        scale('readability', 'Readability'),
        scale('groundedness', 'Groundedness'),
        scale('task_utility', 'Task utility'),
        scale('reproducibility', 'Reproducibility'),
      ];
    default:
      throw new LoupeInputError(`task ${task}`, 'has no verdict controls in the annotation panel');
  }
}

/**
 * Builds a verdict from the panel's choices and note: the task's fields, the note as the reason, the judge's own
 * defaults for the rest (`coerce`), then validated against the schema.
 * @throws LoupeInputError naming the missing choice or the schema problem.
 */
export function verdictFromChoice(
  task: string,
  choice: Record<string, string | number | boolean>,
  note: string,
): unknown {
  const controls = verdictControls(task, {});
  for (const c of controls) {
    const v = choice[c.field];
    if (v === undefined) throw new LoupeInputError(c.label, 'choose a value before submitting');
    if (!c.options.some((o) => o.value === v)) {
      throw new LoupeInputError(c.label, `'${String(v)}' is not one of ${c.options.map((o) => o.label).join(', ')}`);
    }
  }
  const raw: Record<string, unknown> = { ...choice, reason: note };
  if (task === 'checklist-support') {
    Object.assign(raw, { supporting: [], contradicting: [], evidence: note, reasoning: note });
  }
  if (task === 'trend-answer') Object.assign(raw, { used: [], reasoning: note });
  const v = taskDef(task as JudgeTaskName).coerce(raw);
  validateVerdict(task, v, 'verdict');
  return v;
}

/** The choices a stored verdict corresponds to (to show and edit it). */
export function choiceOfVerdict(task: string, verdict: unknown): Record<string, string | number | boolean> {
  const v = (verdict ?? {}) as Record<string, unknown>;
  const out: Record<string, string | number | boolean> = {};
  for (const c of verdictControls(task, {})) {
    const x = v[c.field];
    if (typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean') out[c.field] = x;
  }
  return out;
}

/** The note of a verdict (its reason / reasoning). */
function noteOf(verdict: unknown): string {
  const v = (verdict ?? {}) as Record<string, unknown>;
  return typeof v.reason === 'string' ? v.reason : typeof v.reasoning === 'string' ? v.reasoning : '';
}

/** What is judged, as the expert reads it. */
export function itemFields(task: string, input: unknown): ItemField[] {
  const i = (input ?? {}) as Record<string, unknown>;
  const s = (k: string) => (typeof i[k] === 'string' ? (i[k] as string) : undefined);
  const out: ItemField[] = [];
  const add = (label: string, text: string | undefined, markdown = false, paragraphs = false) => {
    if (text !== undefined && text !== '') out.push({ label, text, markdown, ...(paragraphs ? { paragraphs } : {}) });
  };
  const list = (xs: unknown) => (Array.isArray(xs) ? xs.map((x, k) => `${k}. ${String(x)}`).join('\n\n') : undefined);
  switch (task) {
    case 'claim-support':
      add('Claim', s('claim'));
      add('Quote in the report', s('quote'));
      add('Sources', s('sources'), true, true);
      break;
    case 'checklist-support':
      add('Checklist question', s('question'));
      add('Reference answer', s('answer'));
      add('Insights', list(i.insights), true, true);
      add('Report', s('report'), true, true);
      break;
    case 'trend-answer':
      add('Question', s('question'));
      add('Insights', list(i.insights), true, true);
      add('Report', s('report'), true, true);
      break;
    case 'checklist-score':
      add('Criterion', s('criterion'));
      add('Instruction', s('instruction'), true);
      add('Response', s('response'), true, true);
      break;
    // issue 42: BLADE asks judge.same(kind, ground truth, agent's submission): say which side is which
    case 'semantic-match':
      add('Kind', s('kind'));
      add('A — ground truth', s('a'));
      add('B — agent', s('b'));
      add('Context', s('context'), true);
      break;
    case 'pairwise-novelty':
      add('Insights A', list(i.insightsA), true, true);
      add('Insights B', list(i.insightsB), true, true);
      break;
    case 'hallucination':
      add('Insight', s('insight'));
      add('What the agent saw (steps relevant to the insight)', s('evidence'), true, true);
      break;
    case 'figure-quality':
      add('Reference figure', s('referenceCaption'));
      add('Generated figure', s('generatedCaption'));
      add('Plotting code', s('generatedCode') ? '```python\n' + s('generatedCode') + '\n```' : undefined, true);
      break;
    default:
      for (const [k, v] of Object.entries(i)) if (typeof v === 'string') add(k, v, true);
  }
  return out;
}

/**
 * The text of an item that evidence must mention to be relevant: what is judged, not the material shown with it (a
 * hallucination item's "what the agent saw", a semantic match's research question), which would make every cell match.
 * @returns the judged fields' text (all string fields for a task not listed).
 */
export function judgedText(task: string, input: unknown): string {
  const i = (input ?? {}) as Record<string, unknown>;
  const pick = (...ks: string[]) =>
    ks
      .map((k) => (typeof i[k] === 'string' ? (i[k] as string) : ''))
      .filter(Boolean)
      .join('\n');
  switch (task) {
    case 'hallucination':
      return pick('insight');
    case 'semantic-match':
      return pick('a', 'b');
    case 'claim-support':
      return pick('claim', 'quote');
    case 'checklist-support':
    case 'trend-answer':
      return pick('question', 'answer');
    case 'checklist-score':
      return pick('criterion');
    default:
      return itemFields(task, input)
        .map((f) => f.text)
        .join('\n');
  }
}

/** Numbers an item mentions (≥ 2 significant characters), to find the cells whose output holds them. */
export function numbersIn(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/(?<![\w.])-?\d+(?:[.,]\d+)?(?![\w])/g)) {
    const n = m[0].replace(',', '.');
    if (n.replace(/[-.]/g, '').length >= 2) out.add(n);
  }
  return [...out].slice(0, 50);
}

/** What a run offers as evidence, before matching it to an item. */
interface RunEvidenceBase {
  steps: StepEvidence[];
  cells: Array<Omit<CellEvidence, 'matches'> & { fullOutput: string }>;
  docs: DocEvidence[];
}

/**
 * Keeps the evidence of the last few runs read (steps, cells, documentation searches), keyed by run id and step
 * count so a run that grew is read again: serving the next item of the same run reads nothing from the store.
 */
export class RunEvidenceCache {
  private readonly entries = new Map<string, RunEvidenceBase>();
  private readonly max: number;
  /** @param max runs kept (oldest dropped first). */
  constructor(max = 8) {
    this.max = max;
  }
  async get(rs: RunStore, runId: string, steps: number): Promise<RunEvidenceBase> {
    const key = `${runId}\u0000${steps}`;
    let e = this.entries.get(key);
    if (!e) {
      e = await readRunEvidence(rs, runId);
      this.entries.set(key, e);
      if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
    }
    return e;
  }
}

async function readRunEvidence(rs: RunStore, runId: string): Promise<RunEvidenceBase> {
  const steps: StepEvidence[] = (await rs.getStepSummaries(runId))
    .slice(0, 2000)
    .map((s) => ({ step: s.index, tools: s.toolNames, text: s.content.slice(0, 200), error: s.anyError }));
  const cells = (await rs.getCells(runId, { includeReplays: false })).slice(0, 2000).map((c) => {
    const fullOutput = [c.stdout, c.result ?? ''].join('\n').trim();
    return { seq: c.seq, step: c.stepIndex, code: c.code.slice(0, 400), output: fullOutput.slice(0, 400), fullOutput };
  });
  const docs: DocEvidence[] = [];
  for (const h of runSearchHistory(
    (await rs.getSteps(runId)).map((s) => ({ index: s.index, toolCalls: s.toolCalls })),
  )) {
    const step = Number(/step (\d+)/.exec(h.label)?.[1] ?? 0) - 1;
    for (const f of h.files ?? ['']) docs.push({ path: f, ...(h.query ? { query: h.query } : {}), step });
  }
  return { steps, cells, docs: docs.slice(0, 500) };
}

/**
 * Evidence of a run for an item: steps, the cells whose code or output mentions the item's numbers or words (each with
 * what it mentions; `hiddenCells` counts the others), documentation pages.
 * @param cache reuse of what was read for the same run (the panel keeps one); a fresh read without it.
 */
export async function runEvidence(
  rs: RunStore,
  runId: string,
  itemText: string,
  cache: RunEvidenceCache = new RunEvidenceCache(1),
): Promise<AnnotationItemView['evidence']> {
  const run = await rs.getRun(runId);
  if (!run) return { steps: [], cells: [], docs: [], hiddenCells: 0 };
  const base = await cache.get(rs, runId, run.steps);
  // issue 42: only cells whose code or output mentions the item's numbers or words are offered (not every import cell)
  const nums = numbersIn(itemText);
  const terms = factTerms(itemText).filter((t) => !/^-?\d/.test(t));
  const cells = base.cells.map(({ fullOutput, ...c }) => ({
    ...c,
    matches: [...nums.filter((n) => fullOutput.includes(n)), ...termsMentioned(terms, `${c.code}\n${fullOutput}`)],
  }));
  const relevant = cells.filter((c) => c.matches.length);
  return { steps: base.steps, cells: relevant, docs: base.docs, hiddenCells: cells.length - relevant.length };
}

/** Progress header of a queue. */
export async function queueView(store: AnnotationStore, q: AnnotationQueue, annotator: string): Promise<QueueView> {
  const p = await store.progress(q.id);
  return {
    queueId: q.id,
    name: q.name,
    kind: q.spec.kind,
    reviewers: q.reviewers,
    blind: q.blind,
    annotator,
    total: p.total,
    done: p.done,
    byAnnotator: p.byAnnotator,
    labels: Object.fromEntries(Object.keys(p.byAnnotator).map((who) => [who, annotatorLabel(who, p.roles[who])])),
  };
}

/**
 * The view of one queue item for one annotator.
 * @param rs the run store (evidence); `item` at `pos` of a queue of `size` items.
 */
export async function itemView(
  store: AnnotationStore,
  rs: RunStore,
  q: AnnotationQueue,
  pos: number,
  size: number,
  item: AnnotationItem,
  annotator: string,
  cache?: RunEvidenceCache,
): Promise<AnnotationItemView> {
  const anns = await store.annotations(item.id);
  const { byAnnotator, final } = currentAnnotations(anns);
  const role = q.spec.kind === 'disagreement' ? 'adjudicator' : 'annotator';
  const mineRow =
    role === 'adjudicator' ? (final?.annotator === annotator ? final : undefined) : byAnnotator.get(annotator);
  const fields = itemFields(item.task, item.input);
  const orphaned = item.runId ? !(await store.runExists(item.runId)) : false;
  const evidence =
    item.runId && !orphaned
      ? await runEvidence(rs, item.runId, judgedText(item.task, item.input), cache)
      : { steps: [], cells: [], docs: [] };
  const submitted = anns.some((a) => a.annotator === annotator);
  let revealed: AnnotationItemView['revealed'] = null;
  if (!q.blind || submitted || role === 'adjudicator') {
    const superseded = new Set(anns.map((a) => a.supersedes).filter(Boolean));
    const others: OtherVerdict[] = anns.map((a) => ({
      who: annotatorLabel(a.annotator, a.dbRole ? [a.dbRole] : []),
      kind: a.final ? 'adjudicator' : 'human',
      label: labelOf(item.task, a.verdict) ?? '—',
      note: a.note ?? (noteOf(a.verdict) || null),
      at: a.createdAt,
      superseded: superseded.has(a.id),
    }));
    const llm = await store.llmVerdict(item.id);
    if (llm) {
      others.unshift({
        who: llm.judgeId,
        kind: 'llm',
        label: labelOf(item.task, llm.verdict) ?? '—',
        note: noteOf(llm.verdict) || null,
        at: '',
        superseded: false,
      });
    }
    const res = resolveItem(item, anns);
    revealed = {
      others,
      resolution: { decidedBy: res.decidedBy, label: res.verdict === null ? null : labelOf(item.task, res.verdict) },
    };
  }
  return {
    queueId: q.id,
    pos,
    size,
    itemId: item.id,
    task: item.task,
    taskTitle: TITLES[item.task] ?? item.task,
    criterion: item.criterion,
    suite: item.suite,
    runId: item.runId,
    orphaned,
    fields,
    controls: verdictControls(item.task, item.input),
    evidence,
    draft: (await store.getDraft(q.id, item.id, annotator)) ?? null,
    mine: mineRow
      ? {
          annotationId: mineRow.id,
          choice: choiceOfVerdict(item.task, mineRow.verdict),
          note: mineRow.note,
          evidence: mineRow.evidence,
          at: mineRow.createdAt,
        }
      : null,
    role,
    revealed,
    claims: item.runId && !orphaned ? await claimFactsViews(store, rs, item) : [],
  };
}

/**
 * The claims of an item that an expert may split into atomic facts (issue 43): a report claim (`claim-support`), an
 * insight or fact under audit (`hallucination`), the message-wise insights a checklist item was judged against
 * (`checklist-support`). Other tasks have none.
 */
export function claimsOfItem(
  task: string,
  input: unknown,
): Array<{ index: number; source: 'insight' | 'claim'; text: string }> {
  const i = (input ?? {}) as { claim?: unknown; insight?: unknown; insights?: unknown };
  if (task === 'claim-support' && typeof i.claim === 'string') return [{ index: 0, source: 'claim', text: i.claim }];
  if (task === 'hallucination' && typeof i.insight === 'string') {
    return [{ index: 0, source: 'insight', text: i.insight }];
  }
  if (task === 'checklist-support' && Array.isArray(i.insights)) {
    return i.insights
      .filter((x): x is string => typeof x === 'string')
      .slice(0, 50)
      .map((text, index) => ({ index, source: 'insight' as const, text }));
  }
  return [];
}

/**
 * Each claim of an item with its atomic facts as they stand — the newest expert split, else the rule's proposal — and,
 * per fact, the run's steps that mention its values (the SQL queries / notebook cells that support it).
 */
export async function claimFactsViews(
  store: AnnotationStore,
  rs: RunStore,
  item: AnnotationItem,
): Promise<ClaimFactsView[]> {
  const claims = claimsOfItem(item.task, item.input);
  if (!claims.length || !item.runId) return [];
  const steps = (await rs.getSteps(item.runId)).map(stepTextOf);
  const out: ClaimFactsView[] = [];
  for (const c of claims) {
    const mine = await expertFactSplit(store, item.runId, c.text);
    const facts = mine?.facts ?? splitAtomicFacts(c.text).map((f) => f.statement);
    const linked = linkFacts(
      [{ index: 0, text: c.text, facts, source: mine ? 'expert' : 'rule' }],
      steps,
      Number.MAX_SAFE_INTEGER,
    );
    out.push({
      index: c.index,
      source: c.source,
      text: c.text,
      facts,
      from: mine ? 'expert' : 'rule',
      by: mine?.annotator ?? null,
      steps: linked.map((f) => f.steps),
    });
  }
  return out;
}

/**
 * Records an expert's split of claim `index` of an item (an append-only annotation superseding their previous split).
 * @throws LoupeInputError naming the claim for an unknown claim, an item without a run, or an empty split.
 */
export async function saveFactSplit(
  store: AnnotationStore,
  item: AnnotationItem,
  index: number,
  facts: readonly string[],
  annotator: string,
): Promise<void> {
  const c = claimsOfItem(item.task, item.input).find((x) => x.index === index);
  if (!c || !item.runId) {
    throw new LoupeInputError(`claim ${index + 1} of item ${item.id}`, 'is not a claim of this item');
  }
  const input: FactSplitInput = {
    benchmark: item.suite ?? 'unknown',
    runId: item.runId,
    source: c.source,
    index,
    text: c.text,
    proposed: splitAtomicFacts(c.text).map((f) => f.statement),
  };
  await recordFactSplit(store, input, facts, annotator);
}

/**
 * The panel state at a served (or browsed) entry, or with no item when the queue has nothing left.
 * @param cache the panel's evidence cache (see {@link RunEvidenceCache}).
 */
export async function annotationState(
  store: AnnotationStore,
  rs: RunStore,
  q: AnnotationQueue,
  annotator: string,
  entry: { pos: number; item: AnnotationItem } | undefined,
  cache?: RunEvidenceCache,
): Promise<AnnotationState> {
  const queue = await queueView(store, q, annotator);
  return {
    queue,
    item: entry ? await itemView(store, rs, q, entry.pos, queue.total, entry.item, annotator, cache) : null,
  };
}
