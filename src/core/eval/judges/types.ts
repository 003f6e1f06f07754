/**
 * One interface for every evaluation decision that needs judgement: semantic matches (BLADE
 * conceptual variables and models), checklist support (DDR), 1–5 checklist scores (AnalystBench),
 * claim support (AnalystBench hallucination), pairwise novelty (DDR), hallucination labels (DDR),
 * claim extraction and figure quality (AnalystBench).
 * Every judgement records judge id, prompt hash, raw output, parsed verdict and time.
 * Source: issue 8 "Judges"; spec §1.4.5–1.4.6, §3.4, §4.3.
 */

/** DDR's three-way checklist label (spec §3.4). */
export type ChecklistLabel = 'CORRECT_INFO' | 'INCORRECT_INFO' | 'INSUFFICIENT_INFO';

/** Inputs and verdicts of every judgement task. */
export interface JudgeTasks {
  /** Do two texts name the same thing? BLADE conceptual variables / statistical models. */
  'semantic-match': {
    input: { kind: 'conceptual-variable' | 'model' | 'text'; a: string; b: string; context?: string };
    verdict: { match: boolean; reason: string };
  };
  /** Do these insights (numbered) or this report support a checklist fact? DDR §3.4. */
  'checklist-support': {
    input: {
      question: string;
      answer: string;
      /** Message-wise insights (indices are 0-based positions) … */
      insights?: string[];
      /** … or one trajectory-wise report. */
      report?: string;
      scenario?: string;
      /** 10-K's lenient wording (spec §3.4); default false. */
      lenient?: boolean;
    };
    verdict: {
      label: ChecklistLabel;
      supporting: number[];
      contradicting: number[];
      evidence: string;
      reasoning: string;
    };
  };
  /** GLOBEM: the judge answers a trend question (improved / worsened / same) from the findings. DDR §3.4. */
  'trend-answer': {
    input: { question: string; insights?: string[]; report?: string };
    verdict: { answer: 'improved' | 'worsened' | 'same' | 'no_idea'; used: number[]; reasoning: string };
  };
  /** 1–5 score of a response against one checklist criterion with its rubric. AnalystBench §4.3(b). */
  'checklist-score': {
    input: { instruction: string; response: string; criterion: string; rubric?: string[] };
    verdict: { score: 1 | 2 | 3 | 4 | 5; reason: string };
  };
  /** Is this claim supported by the sources? AnalystBench §4.3(c). */
  'claim-support': {
    input: { claim: string; sources: string; quote?: string };
    verdict: { supported: boolean; reason: string };
  };
  /** Which of two anonymised insight sets is more novel? DDR novelty §3.4. */
  'pairwise-novelty': {
    input: { scenario?: string; insightsA: string[]; insightsB: string[] };
    verdict: { winner: 'A' | 'B' | 'TIE'; reason: string };
  };
  /** Does an insight state facts that cannot be derived from what the agent saw? DDR Table 6. */
  hallucination: {
    input: { insight: string; evidence: string };
    verdict: { hallucinated: boolean; reason: string };
  };
  /** Atomic factual claims of a report, each with its verbatim quote. AnalystBench §4.3(c). */
  'claim-extraction': {
    input: { report: string };
    verdict: { claims: Array<{ claim: string; quote: string }> };
  };
  /**
   * Atomic facts of one compound claim or insight (issue 43): each fact states one checkable thing, numbers, names and
   * units kept as written; a claim that is already atomic comes back as one fact. FActScore (Min et al., 2023).
   */
  'fact-decomposition': {
    input: { text: string; context?: string };
    verdict: { facts: string[] };
  };
  /** Which of two anonymised outputs of one task is better, per criterion and overall (side-by-side review, issue 16). */
  'pairwise-report': {
    input: { instruction: string; criteria: string[]; first: string; second: string };
    verdict: { overall: PairChoice; criteria: Array<{ criterion: string; choice: PairChoice }>; reason: string };
  };
  /** Four 1–5 quality scores of a generated figure matched to a reference figure. AnalystBench §4.3(d). */
  'figure-quality': {
    input: {
      referenceCaption: string;
      generatedCaption: string;
      generatedCode?: string;
      instruction?: string;
      rendered: boolean;
    };
    verdict: {
      readability: number;
      groundedness: number;
      task_utility: number;
      reproducibility: number;
      reason: string;
    };
  };
}

/** A pairwise judge's choice between the output shown first and the one shown second. */
export type PairChoice = 'first' | 'second' | 'tie' | 'both-bad';

/** Name of a judgement task. */
export type JudgeTaskName = keyof JudgeTasks;
/** Input of task K. */
export type JudgeInput<K extends JudgeTaskName> = JudgeTasks[K]['input'];
/** Verdict of task K. */
export type JudgeVerdict<K extends JudgeTaskName> = JudgeTasks[K]['verdict'];

/** `done`: a verdict; `pending`: waiting for a human; `error`: the judge failed (unjudged). */
export type JudgementStatus = 'done' | 'pending' | 'error';

/** One stored judgement. */
export interface Judgement<K extends JudgeTaskName = JudgeTaskName> {
  /** Cache key: hash of judge id, task and prompt (LLM) or input (human). */
  key: string;
  task: K;
  /** `llm:<model>`, `human`, `exact` (identical-text shortcut), ... */
  judgeId: string;
  /** sha256 of the canonical JSON input. */
  inputHash: string;
  /** sha256 of the exact messages sent (LLM); null for human / exact. */
  promptHash: string | null;
  input: JudgeInput<K>;
  /** The judge's raw reply text (LLM), the annotator's note (human); null when none. */
  raw: string | null;
  verdict: JudgeVerdict<K> | null;
  status: JudgementStatus;
  error?: string;
  /** ISO time the judgement was made (or queued, when pending). */
  at: string;
  /** Who answered a human judgement. */
  annotator?: string;
  /** True when served from the cache rather than decided now. */
  cached?: boolean;
  /** Human and `llm+human` judges: which rule decided (adjudicated, majority, single, llm). */
  decidedBy?: string;
}

/** A judge. Implementations: LLM, human, exact-only, scripted (tests). */
export interface Judge {
  /** Stable id recorded with every judgement. */
  readonly id: string;
  /**
   * Judges one item. Never throws for a failed decision: returns status `error` (or `pending`).
   * @throws LoupeInputError for an input that fails validation.
   */
  judge<K extends JudgeTaskName>(task: K, input: JudgeInput<K>, ctx?: JudgeContext): Promise<Judgement<K>>;
}

/** Where a judgement is used (stored with it, for the annotation panel). */
export interface JudgeContext {
  runId?: string;
  /** Free-form pointer to the scored item (e.g. `entity 10502319 / item 3`). */
  itemRef?: string;
  /**
   * The item's id in the benchmark's own terms, which a recorded-verdicts file is keyed by (issue 21): DDR
   * `{ entity, item, context }` (context `message-wise` | `trajectory-wise`), AnalystBench `{ task, criterion }`.
   */
  nativeId?: Readonly<Record<string, string | number>>;
  signal?: AbortSignal;
}

/** Persistence of judgements (memory for tests; the SQLite run store in the product). */
export interface JudgementStore {
  get(key: string): Promise<Judgement | undefined>;
  put(j: Judgement, ctx?: JudgeContext): Promise<void>;
  /** Pending human items, oldest first. */
  listPending(task?: JudgeTaskName): Promise<Judgement[]>;
}

/** Counts of a batch of judgements, reported with every judged score. */
export interface JudgementTally {
  judgeIds: string[];
  done: number;
  pending: number;
  errors: number;
  cached: number;
  exact: number;
}
