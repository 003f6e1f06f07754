/**
 * Per-task definitions for judges: the verdict schema, the prompt (written for Loupe, in our own
 * words; the intent follows the benchmarks' judges), the identical-text shortcut and input
 * validation. Bump {@link PROMPT_VERSION} when a prompt changes: it is part of the prompt hash, so
 * cached verdicts from older prompts are not reused.
 * Source: spec §1.4.5–1.4.6 (BLADE matching), §3.4 (DDR checks, novelty), §4.3 (AnalystBench).
 */
import { LoupeInputError } from '../../util/errors.ts';
import type { MiniSchema } from './schema.ts';
import type { JudgeInput, JudgeTaskName, JudgeVerdict, PairChoice } from './types.ts';

/** Version tag mixed into every prompt hash. */
export const PROMPT_VERSION = 'loupe-judge-v1';

/** A rendered prompt: system + user message. */
export interface JudgePrompt {
  system: string;
  user: string;
}

/** Definition of one judgement task. */
export interface JudgeTaskDef<K extends JudgeTaskName> {
  schema: MiniSchema;
  prompt(input: JudgeInput<K>): JudgePrompt;
  /** A verdict that needs no judge (identical text), or undefined. */
  exact(input: JudgeInput<K>): JudgeVerdict<K> | undefined;
  /** Throws LoupeInputError for malformed input. */
  validate(input: JudgeInput<K>): void;
  /** Turns a schema-valid object into the verdict (defaults for optional fields). */
  coerce(parsed: unknown): JudgeVerdict<K>;
  /** Reads a verdict from a reply that is not valid JSON for the schema, when the task has a convention for it. */
  fallback?(raw: string): JudgeVerdict<K> | undefined;
}

/**
 * Canonical form for identical-text comparisons: Unicode NFKC, lower case, collapsed whitespace,
 * trailing punctuation removed.
 * @param s any text. @returns the canonical text.
 */
export function canonicalText(s: string): string {
  return s
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[.;:!?]+$/, '')
    .trim();
}

const str = (v: unknown, what: string): string => {
  if (typeof v !== 'string') throw new LoupeInputError(`judge input ${what}`, 'must be a string');
  return v;
};

const reasonSchema: MiniSchema = { type: 'string' };
const score15: MiniSchema = { type: 'integer', minimum: 1, maximum: 5 };

function numbered(items: readonly string[]): string {
  return items.map((t, i) => `[Message ${i}]: ${t}`).join('\n\n');
}

/**
 * Reads "therefore, the rating is: X" (AnalystBench's reply convention) — the last occurrence wins;
 * "4/5" reads as 4 (the parsing bug the AnalystBench authors fixed, spec §4.3(b)).
 * @param text a judge reply. @returns 1–5, or undefined when absent or out of range.
 */
export function extractRating(text: string): 1 | 2 | 3 | 4 | 5 | undefined {
  const re = /rating\s+is\s*:?\s*\**\s*([1-5])(?:\s*\/\s*5)?(?![0-9.])/gi;
  let last: string | undefined;
  for (const m of text.matchAll(re)) last = m[1];
  return last ? (Number(last) as 1 | 2 | 3 | 4 | 5) : undefined;
}

const defs: { [K in JudgeTaskName]: JudgeTaskDef<K> } = {
  'semantic-match': {
    schema: {
      type: 'object',
      required: ['match', 'reason'],
      properties: { match: { type: 'boolean' }, reason: reasonSchema },
    },
    validate(i) {
      str(i.a, 'a');
      str(i.b, 'b');
    },
    exact(i) {
      return canonicalText(i.a) === canonicalText(i.b) ? { match: true, reason: 'identical text' } : undefined;
    },
    prompt(i) {
      const what =
        i.kind === 'conceptual-variable'
          ? 'conceptual variables of a data analysis (the constructs an analysis measures, e.g. "socioeconomic status")'
          : i.kind === 'model'
            ? 'statistical models (model families and their essential specification, e.g. "logistic regression with random intercepts")'
            : 'descriptions';
      return {
        system: `You compare two ${what}. Decide whether they refer to the same thing, allowing different wording, abbreviations and levels of detail that do not change the meaning. They do not match if one is broader, narrower or a different construct in a way that would change the analysis. Reply with JSON only: {"match": true|false, "reason": "<one sentence>"}.`,
        user: `${i.context ? `Context: ${i.context}\n\n` : ''}First: ${i.a}\nSecond: ${i.b}`,
      };
    },
    coerce(p) {
      const o = p as { match: boolean; reason: string };
      return { match: o.match, reason: o.reason };
    },
  },
  'checklist-support': {
    schema: {
      type: 'object',
      required: ['label'],
      properties: {
        label: { type: 'string', enum: ['CORRECT_INFO', 'INCORRECT_INFO', 'INSUFFICIENT_INFO'] },
        supporting: { type: 'array', items: { type: 'integer', minimum: 0 } },
        contradicting: { type: 'array', items: { type: 'integer', minimum: 0 } },
        evidence: { type: 'string' },
        reasoning: { type: 'string' },
      },
    },
    validate(i) {
      str(i.question, 'question');
      str(i.answer, 'answer');
      if (!i.insights && i.report === undefined) {
        throw new LoupeInputError('judge input checklist-support', 'needs insights or report');
      }
    },
    exact(i) {
      const a = canonicalText(i.answer);
      if (a === '') return undefined;
      if (i.insights) {
        const at = i.insights.findIndex((t) => canonicalText(t) === a);
        if (at >= 0) {
          return {
            label: 'CORRECT_INFO',
            supporting: [at],
            contradicting: [],
            evidence: i.insights[at]!,
            reasoning: 'identical text',
          };
        }
      } else if (i.report !== undefined && canonicalText(i.report) === a) {
        return {
          label: 'CORRECT_INFO',
          supporting: [],
          contradicting: [],
          evidence: i.report,
          reasoning: 'identical text',
        };
      }
      return undefined;
    },
    prompt(i) {
      const strictness = i.lenient
        ? 'Be generous: count the fact as found when the text states it or something clearly equivalent, even loosely; call it contradicted only when the text plainly states the opposite.'
        : 'Count the fact as found only when the text states it or an equivalent; call it contradicted when the text states something incompatible with it.';
      const body = i.insights
        ? `Numbered findings of the analyst:\n${numbered(i.insights)}`
        : `Final report of the analyst:\n${i.report}`;
      return {
        system: `You check whether an analyst's findings${i.scenario ? ` about a ${i.scenario} record` : ''} contain a known fact. The fact is given as a question and its reference answer. ${strictness} Labels: CORRECT_INFO (the findings support the reference answer), INCORRECT_INFO (they contradict it), INSUFFICIENT_INFO (they do not address it). ${i.insights ? 'List the numbers of the findings that support and that contradict the answer.' : ''} Reply with JSON only: {"label": "...", "supporting": [numbers], "contradicting": [numbers], "evidence": "<quoted text>", "reasoning": "<short>"}.`,
        user: `${body}\n\nQuestion: ${i.question}\nReference answer: ${i.answer}`,
      };
    },
    coerce(p) {
      const o = p as Partial<JudgeVerdict<'checklist-support'>> & { label: JudgeVerdict<'checklist-support'>['label'] };
      return {
        label: o.label,
        supporting: o.supporting ?? [],
        contradicting: o.contradicting ?? [],
        evidence: o.evidence ?? '',
        reasoning: o.reasoning ?? '',
      };
    },
  },
  'trend-answer': {
    schema: {
      type: 'object',
      required: ['answer'],
      properties: {
        answer: { type: 'string', enum: ['improved', 'worsened', 'same', 'no_idea'] },
        used: { type: 'array', items: { type: 'integer', minimum: 0 } },
        reasoning: reasonSchema,
      },
    },
    validate(i) {
      str(i.question, 'question');
      if (!i.insights && i.report === undefined) {
        throw new LoupeInputError('judge input trend-answer', 'needs insights or report');
      }
    },
    exact() {
      return undefined;
    },
    prompt(i) {
      const body = i.insights
        ? `Numbered findings of the analyst:\n${numbered(i.insights)}`
        : `Final report of the analyst:\n${i.report}`;
      return {
        system: `You answer a question about how a study participant's measure changed between the start and the end of a study, using only an analyst's findings. Answer "improved", "worsened" or "same" (remained almost the same); answer "no_idea" only if the findings say nothing that bears on it. ${i.insights ? 'List the numbers of the findings you used.' : ''} Reply with JSON only: {"answer": "...", "used": [numbers], "reasoning": "<short>"}.`,
        user: `${body}\n\nQuestion: ${i.question}`,
      };
    },
    coerce(p) {
      const o = p as { answer: JudgeVerdict<'trend-answer'>['answer']; used?: number[]; reasoning?: string };
      return { answer: o.answer, used: o.used ?? [], reasoning: o.reasoning ?? '' };
    },
  },
  'checklist-score': {
    schema: { type: 'object', required: ['score'], properties: { score: score15, reason: reasonSchema } },
    validate(i) {
      str(i.instruction, 'instruction');
      str(i.response, 'response');
      str(i.criterion, 'criterion');
    },
    exact() {
      return undefined;
    },
    prompt(i) {
      const rubric = i.rubric?.length
        ? `\nScoring guide:\n${i.rubric.map((r, k) => `  ${k + 1}: ${r}`).join('\n')}`
        : '\nScoring guide: 1 = not met at all, 2 = barely met, 3 = partly met, 4 = mostly met, 5 = fully met.';
      return {
        system:
          'You grade a written analysis against exactly one criterion, using the criterion\'s 1–5 scoring guide. Judge only what the criterion asks; do not add requirements of your own. Plotting code included in the response counts as the figures it would draw. Reply with JSON only: {"score": <1-5>, "reason": "<two sentences at most>"}.',
        user: `Task given to the analyst:\n${i.instruction}\n\nCriterion: ${i.criterion}${rubric}\n\nResponse to grade:\n${i.response}`,
      };
    },
    coerce(p) {
      const o = p as { score: number; reason?: string };
      return { score: o.score as 1 | 2 | 3 | 4 | 5, reason: o.reason ?? '' };
    },
    fallback(raw) {
      const r = extractRating(raw);
      return r ? { score: r, reason: raw.trim().slice(0, 500) } : undefined;
    },
  },
  'claim-support': {
    schema: {
      type: 'object',
      required: ['supported'],
      properties: { supported: { type: 'boolean' }, reason: reasonSchema },
    },
    validate(i) {
      str(i.claim, 'claim');
      str(i.sources, 'sources');
    },
    exact(i) {
      const c = canonicalText(i.claim);
      return c.length >= 12 && canonicalText(i.sources).includes(c)
        ? { supported: true, reason: 'claim appears verbatim in the sources' }
        : undefined;
    },
    prompt(i) {
      return {
        system:
          'You verify one factual claim from a report against source material. The claim is supported only if the sources state it or it follows directly from them (simple arithmetic and rounding allowed). Facts that may be true but are not in the sources are NOT supported. Reply with JSON only: {"supported": true|false, "reason": "<short>"}.',
        user: `Sources:\n${i.sources}\n\nClaim: ${i.claim}${i.quote ? `\n(Report sentence: ${i.quote})` : ''}`,
      };
    },
    coerce(p) {
      const o = p as { supported: boolean; reason?: string };
      return { supported: o.supported, reason: o.reason ?? '' };
    },
  },
  'pairwise-novelty': {
    schema: {
      type: 'object',
      required: ['winner'],
      properties: { winner: { type: 'string', enum: ['A', 'B', 'TIE'] }, reason: reasonSchema },
    },
    validate(i) {
      if (!Array.isArray(i.insightsA) || !Array.isArray(i.insightsB)) {
        throw new LoupeInputError('judge input pairwise-novelty', 'insightsA and insightsB must be arrays');
      }
    },
    exact(i) {
      const a = i.insightsA.map(canonicalText).sort().join('\n');
      const b = i.insightsB.map(canonicalText).sort().join('\n');
      return a === b ? { winner: 'TIE', reason: 'identical insight sets' } : undefined;
    },
    prompt(i) {
      const who =
        i.scenario === 'mimic'
          ? 'an experienced clinician reviewing findings about one patient'
          : i.scenario === '10k'
            ? 'a financial analyst reviewing findings about one company'
            : i.scenario === 'globem'
              ? 'a behavioural scientist reviewing findings about one study participant'
              : 'an expert reviewing findings about one subject';
      return {
        system: `You are ${who}. Two anonymous analysts, A and B, explored the same data. Decide whose findings are more novel: non-obvious, specific, and useful beyond routine descriptive facts. Ignore length and order. Reply with JSON only: {"winner": "A"|"B"|"TIE", "reason": "<100 words at most>"}.`,
        user: `Findings of A:\n${i.insightsA.map((t) => `- ${t}`).join('\n') || '(none)'}\n\nFindings of B:\n${i.insightsB.map((t) => `- ${t}`).join('\n') || '(none)'}`,
      };
    },
    coerce(p) {
      const o = p as { winner: 'A' | 'B' | 'TIE'; reason?: string };
      return { winner: o.winner, reason: o.reason ?? '' };
    },
  },
  'pairwise-report': {
    schema: {
      type: 'object',
      required: ['overall', 'criteria'],
      properties: {
        overall: { type: 'string', enum: ['first', 'second', 'tie', 'both-bad'] },
        criteria: {
          type: 'array',
          items: {
            type: 'object',
            required: ['criterion', 'choice'],
            properties: {
              criterion: { type: 'string' },
              choice: { type: 'string', enum: ['first', 'second', 'tie', 'both-bad'] },
            },
          },
        },
        reason: reasonSchema,
      },
    },
    validate(i) {
      str(i.instruction, 'instruction');
      str(i.first, 'first');
      str(i.second, 'second');
      if (!Array.isArray(i.criteria) || !i.criteria.length || i.criteria.some((c) => typeof c !== 'string')) {
        throw new LoupeInputError('judge input pairwise-report', 'criteria must be a non-empty list of names');
      }
    },
    exact(i) {
      return i.first === i.second
        ? {
            overall: 'tie',
            criteria: i.criteria.map((criterion) => ({ criterion, choice: 'tie' as const })),
            reason: 'identical outputs',
          }
        : undefined;
    },
    prompt(i) {
      return {
        system:
          'You are an expert data analyst reviewing two anonymous answers to the same analysis task, shown as Output 1 and Output 2. ' +
          'For each criterion, and overall, decide which output is better: "first", "second", "tie" (equally good) or "both-bad" (neither is acceptable). ' +
          'Judge substance, correctness and support by the data; ignore length, style and the order of presentation. ' +
          `Reply with JSON only: {"criteria": [{"criterion": "<name>", "choice": "first"|"second"|"tie"|"both-bad"}, ...], "overall": "first"|"second"|"tie"|"both-bad", "reason": "<100 words at most>"}.`,
        user: `Task:\n${i.instruction}\n\nCriteria:\n${i.criteria.map((c) => `- ${c}`).join('\n')}\n\n=== Output 1 ===\n${i.first || '(no output)'}\n\n=== Output 2 ===\n${i.second || '(no output)'}`,
      };
    },
    coerce(p) {
      const o = p as {
        overall: PairChoice;
        criteria: Array<{ criterion: string; choice: PairChoice }>;
        reason?: string;
      };
      return {
        overall: o.overall,
        criteria: o.criteria.map((c) => ({ criterion: c.criterion, choice: c.choice })),
        reason: o.reason ?? '',
      };
    },
  },
  hallucination: {
    schema: {
      type: 'object',
      required: ['hallucinated'],
      properties: { hallucinated: { type: 'boolean' }, reason: reasonSchema },
    },
    validate(i) {
      str(i.insight, 'insight');
      str(i.evidence, 'evidence');
    },
    exact(i) {
      const c = canonicalText(i.insight);
      return c.length >= 12 && canonicalText(i.evidence).includes(c)
        ? { hallucinated: false, reason: 'insight appears verbatim in the evidence' }
        : undefined;
    },
    prompt(i) {
      return {
        system:
          'You audit one finding written by a data-analysis agent. You see everything the agent saw (its instructions, tool calls and results). The finding is hallucinated if it states any fact — even a true one — that cannot be derived from that material. Reply with JSON only: {"hallucinated": true|false, "reason": "<short>"}.',
        user: `What the agent saw:\n${i.evidence}\n\nFinding: ${i.insight}`,
      };
    },
    coerce(p) {
      const o = p as { hallucinated: boolean; reason?: string };
      return { hallucinated: o.hallucinated, reason: o.reason ?? '' };
    },
  },
  'claim-extraction': {
    schema: {
      type: 'object',
      required: ['claims'],
      properties: {
        claims: {
          type: 'array',
          items: {
            type: 'object',
            required: ['claim', 'quote'],
            properties: { claim: { type: 'string' }, quote: { type: 'string' } },
          },
        },
      },
    },
    validate(i) {
      str(i.report, 'report');
    },
    exact(i) {
      return i.report.trim() === '' ? { claims: [] } : undefined;
    },
    prompt(i) {
      return {
        system:
          'You split a report into atomic factual claims: each claim states one checkable fact. Keep numbers, names and units exactly as written (no rounding). Leave out common knowledge, introductions, opinions and facts about the document itself. For each claim give the sentence of the report it comes from, copied verbatim. Reply with JSON only: {"claims": [{"claim": "...", "quote": "..."}]}.',
        user: `Report:\n${i.report}`,
      };
    },
    coerce(p) {
      return { claims: (p as { claims: Array<{ claim: string; quote: string }> }).claims };
    },
  },
  'fact-decomposition': {
    schema: {
      type: 'object',
      required: ['facts'],
      properties: { facts: { type: 'array', items: { type: 'string' } } },
    },
    validate(i) {
      str(i.text, 'text');
    },
    exact(i) {
      return i.text.trim() === '' ? { facts: [] } : undefined;
    },
    prompt(i) {
      return {
        system:
          'You split one finding written by a data-analysis agent into atomic facts: each fact states exactly one checkable thing (one value, one comparison or one relation) and reads on its own (repeat the subject instead of "it"). Keep numbers, names and units exactly as written; do not add, infer or drop any fact; leave out headings and filler that state nothing. A finding that already states one fact comes back unchanged as one fact. Reply with JSON only: {"facts": ["...", "..."]}.',
        user: `${i.context ? `Context: ${i.context}\n\n` : ''}Finding:\n${i.text}`,
      };
    },
    coerce(p) {
      return { facts: (p as { facts: string[] }).facts.map((f) => f.trim()).filter(Boolean) };
    },
  },
  'figure-quality': {
    schema: {
      type: 'object',
      required: ['readability', 'groundedness', 'task_utility', 'reproducibility'],
      properties: {
        readability: score15,
        groundedness: score15,
        task_utility: score15,
        reproducibility: score15,
        reason: reasonSchema,
      },
    },
    validate(i) {
      str(i.referenceCaption, 'referenceCaption');
      str(i.generatedCaption, 'generatedCaption');
    },
    exact(i) {
      return i.rendered
        ? undefined
        : {
            readability: 1,
            groundedness: 1,
            task_utility: 1,
            reproducibility: 1,
            reason: 'figure missing or not rendered',
          };
    },
    prompt(i) {
      return {
        system:
          'You rate a figure from a generated report against the corresponding figure of a reference report, on four 1–5 scales: readability (labels, legend, clarity), groundedness (shows data the report relies on, correctly), task_utility (helps answer the task as the reference figure does), reproducibility (the code or description is enough to redraw it; 1 if missing). Reply with JSON only: {"readability": n, "groundedness": n, "task_utility": n, "reproducibility": n, "reason": "<short>"}.',
        user: `${i.instruction ? `Task: ${i.instruction}\n\n` : ''}Reference figure caption: ${i.referenceCaption}\n\nGenerated figure caption: ${i.generatedCaption}${i.generatedCode ? `\n\nPlotting code:\n${i.generatedCode}` : ''}`,
      };
    },
    coerce(p) {
      const o = p as JudgeVerdict<'figure-quality'>;
      return {
        readability: o.readability,
        groundedness: o.groundedness,
        task_utility: o.task_utility,
        reproducibility: o.reproducibility,
        reason: o.reason ?? '',
      };
    },
  },
};

/**
 * The definition of a task.
 * @param task a task name. @returns its definition.
 * @throws LoupeInputError for an unknown task name.
 */
export function taskDef<K extends JudgeTaskName>(task: K): JudgeTaskDef<K> {
  const d = defs[task];
  if (!d) throw new LoupeInputError(`judge task ${String(task)}`, 'unknown task');
  return d as JudgeTaskDef<K>;
}
