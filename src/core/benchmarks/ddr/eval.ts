/**
 * DDR-Bench scoring: checklist checking of message-wise (I_m) and trajectory-wise (I_t) insights
 * through a judge, sample- and item-averaged accuracy, the top-k interaction curve, database coverage
 * and normalised exploration entropy from touched fields, novelty by pairwise judge comparisons
 * aggregated with Bradley–Terry, and hallucination rate from judge labels.
 * Source: spec §3.4 (`run_evaluation.py`, `evaluate/*`), §3.7, §5.3 rows 6–7; paper §3.2, §4.2, §7.
 */
import { seededRandom } from '../../util/random.ts';
import { touchedFields } from './sql-tool.ts';
import { LoupeInputError } from '../../util/errors.ts';
import { fitBradleyTerry } from '../../eval/bradley-terry.ts';
import { pyJsonLoads, PyJsonError, pyMax, pyStatisticsMean, pyStrip } from '../../eval/numpy-python.ts';
import { mapLimit, tallyJudgements } from '../../eval/judges/judge.ts';
import type {
  ChecklistLabel,
  Judge,
  JudgeContext,
  Judgement,
  JudgementTally,
  JudgeVerdict,
} from '../../eval/judges/types.ts';

/** One checklist fact (a `qa.json` pair). */
export interface DdrChecklistItem {
  question: string;
  answer: string;
  sourceText?: string;
}

/** What one run produced for one entity. */
export interface DdrEntityRun {
  entityId: string;
  checklist: readonly DdrChecklistItem[];
  /** Message-wise insights in order (raw; "NO INSIGHT" ones are filtered per option). */
  insights: ReadonlyArray<string | null>;
  /** Trajectory-wise insight: the final report (null / '' when none). */
  report: string | null;
  /** Run id, recorded with judgements. */
  runId?: string;
}

/** Options of DDR scoring; every score records the values used. */
export interface DdrOptions {
  /** `mimic` | `10k` | `globem` (or any name); sets the judge's wording. */
  scenario: string;
  /**
   * Entities with no valid insights / no report: `zero` (paper: they score 0) or `drop` (shipped
   * code: they leave the averages). Default `zero`.
   */
  empty_insights: 'zero' | 'drop';
  /** `substring` (code: drop any insight containing "NO INSIGHT") or `exact` (only an insight that is just "NO INSIGHT"). Default `substring`. */
  no_insight_filter: 'substring' | 'exact';
  /** Judge wording: `scenario` (code: lenient for 10-K only), `always`, `never`. Default `scenario`. */
  lenient: 'scenario' | 'always' | 'never';
  /** Parallel judge calls (default 4). */
  concurrency: number;
  /**
   * GLOBEM items: `answer` (the judge answers improved / worsened / same from the findings and the
   * answer is compared exactly with the ground-truth category: the paper's exact match; the code's
   * LLM YES/NO equivalence reduces to the same comparison for three fixed categories) or `support`
   * (the same support check as the other scenarios). Default `answer`.
   */
  globem_check: 'answer' | 'support';
  /** Failed judge calls: `exclude` from denominators (default) or `count` as not correct (code: API_FAILED stays in the denominator; the top-k curve follows too). Pending human items are always excluded. */
  failed_judgements: 'exclude' | 'count';
  /**
   * How a judge reply is read (LLM and recorded replies). `substring` (DDR's code, `_parse_context_quality_result`;
   * issue 21 item 13, issue 47 items 9–11): the reply stripped as DDR's API call strips it (an empty one is a failed
   * call, API_FAILED), code fences removed, read with Python's `json.loads` (so `NaN` / `Infinity` parse); a JSON
   * object gives the label of the key its prompt asked for (DDR's replies: `context_quality` only, default
   * INSUFFICIENT_INFO; Loupe's prompt: `label`); any other text CORRECT_INFO if it contains `CORRECT_INFO` anywhere —
   * so a reply saying INCORRECT_INFO reads as correct — else INCORRECT_INFO, else INSUFFICIENT_INFO, no message
   * indices. `whole-word` (recommended for new evaluations): the same, but the text's label is read as a whole word,
   * so INCORRECT_INFO is never read as CORRECT_INFO; a text naming two different labels is a failed judgement.
   * `error` (Loupe 0.1, the paper preset): a reply that is not JSON for `JSON.parse` is invalid, retried, then a failed
   * judgement. Default `error`.
   */
  unparsed_reply: 'substring' | 'whole-word' | 'error';
  /**
   * A JSON reply's label spelled otherwise than exactly (`"correct_info"`): `exact` (DDR code: counts as none of the
   * three labels, stays in the denominator, never correct) or `any` (Loupe: read case-insensitively). Default `any`.
   * Issue 21 item 14.
   */
  label_case: 'exact' | 'any';
}

/** DDR's defaults. */
export const DEFAULT_DDR_OPTIONS: Readonly<DdrOptions> = Object.freeze({
  scenario: 'mimic',
  empty_insights: 'zero',
  no_insight_filter: 'substring',
  lenient: 'scenario',
  concurrency: 4,
  globem_check: 'answer',
  failed_judgements: 'exclude',
  unparsed_reply: 'error',
  label_case: 'any',
});

/** The option values of DDR's shipped code (`--preset official`, issue 21 item 15). */
export const DDR_OFFICIAL_OPTIONS: Readonly<
  Pick<DdrOptions, 'empty_insights' | 'failed_judgements' | 'unparsed_reply' | 'label_case'>
> = Object.freeze({
  empty_insights: 'drop',
  failed_judgements: 'count',
  unparsed_reply: 'substring',
  label_case: 'exact',
});

const EXACT_LABELS: ReadonlySet<string> = new Set(['CORRECT_INFO', 'INCORRECT_INFO', 'INSUFFICIENT_INFO']);

/** A judge reply read the way DDR's code reads it. */
export interface DdrOfficialReading {
  /**
   * `json`: the reply parsed as JSON; `text`: it did not, and the fallback decided; `empty`: nothing after stripping
   * (DDR: API_FAILED); `ambiguous`: the whole-word fallback found two different labels.
   */
  kind: 'json' | 'text' | 'empty' | 'ambiguous';
  /** The label exactly as the code keeps it (`context_quality`, or Loupe's `label` key; may be `correct_info`); '' for `empty` / `ambiguous`. */
  label: string;
  /** Message indices as Python numbers (booleans as 0 / 1, NaN and infinities kept), in reply order. */
  supporting: number[];
  contradicting: number[];
}

/** How {@link ddrOfficialReading} reads a reply. */
export interface DdrReadingMode {
  /**
   * `python` (DDR: the reply stripped as DDR's API call does, `json.loads` with NaN / Infinity; a reply empty after
   * stripping is `empty`) or `javascript` (`JSON.parse`, Loupe 0.1).
   */
  json: 'python' | 'javascript';
  /**
   * The keys of the prompt the reply answers: `ddr` (DDR's prompt: `context_quality`, `supporting_message_indices`,
   * `contradicting_message_indices` only), `loupe` (Loupe's prompt: `label`, `supporting`, `contradicting` only) or
   * `either` (DDR's key, else Loupe's: Loupe 0.1).
   */
  keys: 'ddr' | 'loupe' | 'either';
  /** Text that is not JSON: `substring` (DDR: `CORRECT_INFO` tested first, anywhere) or `whole-word`. */
  fallback: 'substring' | 'whole-word';
}

const LEGACY_READING: DdrReadingMode = { json: 'javascript', keys: 'either', fallback: 'substring' };

/**
 * Reads a checklist judge reply as DDR's `_parse_context_quality_result` does (with `mode` python / ddr / substring):
 * the reply `.strip()`ped (DDR's `call_*_api` returns the content stripped; empty → `empty`, DDR's API_FAILED), code
 * fences removed, `json.loads`; on success the `context_quality` field (default `INSUFFICIENT_INFO`) kept as written;
 * on failure the first of `CORRECT_INFO`, `INCORRECT_INFO` contained in the upper-cased text (the first test also
 * matches inside `INCORRECT_INFO`), else `INSUFFICIENT_INFO`. `whole-word` instead finds the labels as whole words
 * (`_` is a word character, so CORRECT_INFO is not found inside INCORRECT_INFO); two different labels → `ambiguous`.
 * @param raw the reply text. @param mode see {@link DdrReadingMode} (default: Loupe 0.1's reading).
 * @returns the reading, or null for JSON that is not an object or that Python's `json.loads` refuses other than as a
 *   decode error (DDR's code raises there and the evaluation stops).
 * Source: DDR_Bench `evaluate/unified_evaluator.py` `_parse_context_quality_result`, `evaluate/base_evaluator.py`
 * `call_vllm_api` / `call_openai_api` / `call_azure_openai_api` (`.strip()`) @ cc0aafb0; CPython `json.loads`.
 */
export function ddrOfficialReading(raw: string, mode: DdrReadingMode = LEGACY_READING): DdrOfficialReading | null {
  const stripped = mode.json === 'python' ? pyStrip(raw) : raw;
  if (mode.json === 'python' && stripped === '') return { kind: 'empty', label: '', supporting: [], contradicting: [] };
  const text = stripped.replaceAll('```json', '').replaceAll('```', '');
  let data: unknown;
  let parsed = true;
  try {
    data = mode.json === 'python' ? pyJsonLoads(text) : JSON.parse(text);
  } catch (e) {
    if (e instanceof PyJsonError && e.kind !== 'decode') return null;
    parsed = false;
  }
  if (parsed) {
    if (typeof data !== 'object' || data === null || Array.isArray(data)) return null;
    const d = data as Record<string, unknown>;
    const pick = (ddr: string, loupe: string) =>
      mode.keys === 'ddr' ? d[ddr] : mode.keys === 'loupe' ? d[loupe] : (d[ddr] ?? d[loupe]);
    const label = pick('context_quality', 'label') ?? 'INSUFFICIENT_INFO';
    const nums = (v: unknown) =>
      Array.isArray(v)
        ? v.filter((x): x is number | boolean => typeof x === 'number' || typeof x === 'boolean').map(Number)
        : [];
    return {
      kind: 'json',
      label: typeof label === 'string' ? label : JSON.stringify(label),
      supporting: nums(pick('supporting_message_indices', 'supporting')),
      contradicting: nums(pick('contradicting_message_indices', 'contradicting')),
    };
  }
  const upper = text.toUpperCase();
  if (mode.fallback === 'whole-word') {
    const found = new Set(
      [...upper.matchAll(/(?<![A-Z0-9_])(CORRECT_INFO|INCORRECT_INFO|INSUFFICIENT_INFO)(?![A-Z0-9_])/g)].map(
        (m) => m[1]!,
      ),
    );
    if (found.size > 1) return { kind: 'ambiguous', label: '', supporting: [], contradicting: [] };
    return { kind: 'text', label: [...found][0] ?? 'INSUFFICIENT_INFO', supporting: [], contradicting: [] };
  }
  const label = upper.includes('CORRECT_INFO')
    ? 'CORRECT_INFO'
    : upper.includes('INCORRECT_INFO')
      ? 'INCORRECT_INFO'
      : 'INSUFFICIENT_INFO';
  return { kind: 'text', label, supporting: [], contradicting: [] };
}

/**
 * Builds DDR options from `name=value` strings (CLI `--option`).
 * @param raw values by name. @returns complete options.
 * @throws LoupeInputError naming the option for an invalid value.
 */
export function ddrOptions(raw: Record<string, string | number | undefined> = {}): DdrOptions {
  const o: DdrOptions = { ...DEFAULT_DDR_OPTIONS };
  const pick = <T extends string>(name: keyof DdrOptions, allowed: readonly T[]): T | undefined => {
    const v = raw[name];
    if (v === undefined) return undefined;
    if (!allowed.includes(v as T)) {
      throw new LoupeInputError(`option ${name}`, `must be one of ${allowed.join(', ')}, got '${v}'`);
    }
    return v as T;
  };
  if (raw.scenario !== undefined) o.scenario = String(raw.scenario);
  o.empty_insights = pick('empty_insights', ['zero', 'drop'] as const) ?? o.empty_insights;
  o.no_insight_filter = pick('no_insight_filter', ['substring', 'exact'] as const) ?? o.no_insight_filter;
  o.lenient = pick('lenient', ['scenario', 'always', 'never'] as const) ?? o.lenient;
  o.globem_check = pick('globem_check', ['answer', 'support'] as const) ?? o.globem_check;
  o.failed_judgements = pick('failed_judgements', ['exclude', 'count'] as const) ?? o.failed_judgements;
  o.unparsed_reply = pick('unparsed_reply', ['substring', 'whole-word', 'error'] as const) ?? o.unparsed_reply;
  o.label_case = pick('label_case', ['exact', 'any'] as const) ?? o.label_case;
  if (raw.concurrency !== undefined) {
    const n = Number(raw.concurrency);
    if (!Number.isInteger(n) || n < 1) {
      throw new LoupeInputError('option concurrency', `must be a positive integer, got '${raw.concurrency}'`);
    }
    o.concurrency = n;
  }
  return o;
}

/**
 * Valid message-wise insights: blanks dropped, and "NO INSIGHT" ones dropped by the chosen rule.
 * @param insights raw insights; `rule` see {@link DdrOptions.no_insight_filter}.
 * @returns the kept insight texts (their positions are the indices judges refer to).
 * Source: spec §3.4 "Loading logs", §3.7 item 11.
 */
export function validInsights(
  insights: ReadonlyArray<string | null>,
  rule: DdrOptions['no_insight_filter'] = 'substring',
): string[] {
  const out: string[] = [];
  for (const s of insights) {
    const t = (s ?? '').trim();
    if (!t) continue;
    if (rule === 'substring' ? /NO INSIGHT/i.test(t) : /^['"]?NO INSIGHT['".]*$/i.test(t)) continue;
    out.push(t);
  }
  return out;
}

/** One checked checklist item. */
export interface DdrItemResult {
  index: number;
  question: string;
  /** null while the judgement is pending or failed (unjudged). */
  label: ChecklistLabel | null;
  supporting: number[];
  contradicting: number[];
  judgeId: string;
  judgementKey: string | null;
  status: Judgement['status'] | 'no-context';
  /** The label as DDR's code kept it, when an official-code option changed this item's label (e.g. `correct_info`). */
  officialLabel?: string;
  /** Which official-code option changed this item (`unparsed_reply`, `label_case`). */
  changedBy?: 'unparsed_reply' | 'label_case';
  /** How the reply was read when `unparsed_reply` re-read it: `json`, `text` (fallback), `empty` (API_FAILED), `ambiguous`. */
  reading?: DdrOfficialReading['kind'];
}

/** Per entity and context. */
export interface DdrEntityContextScore {
  entityId: string;
  /** False when the entity has no insights/report and `empty_insights = drop`. */
  included: boolean;
  items: DdrItemResult[];
  correct: number;
  /** Judged items (denominator). */
  judged: number;
  /** correct / judged, in [0, 1]; null when nothing was judged. */
  accuracy: number | null;
}

/** Aggregate accuracy of one context (I_m or I_t). */
export interface DdrAccuracy {
  /** Mean over included entities of per-entity accuracy (fraction; exact mean rounded once, as Python's `statistics.mean`). */
  sampleAveraged: number | null;
  /** Σ correct / Σ judged (fraction). */
  itemAveraged: number | null;
  /**
   * The two averages in percent exactly as DDR computes them (`calculate_summary_stats`: per entity
   * `correct / total * 100`; `calculate_overall_stats`: `statistics.mean` of those — exact — and
   * `total_correct / total_q * 100`): `average_correct_percentage` and `overall_correct_percentage` bit for bit.
   */
  percent: { sampleAveraged: number | null; itemAveraged: number | null };
  entities: number;
  items: number;
  correct: number;
  pending: number;
  errors: number;
}

/** DDR checklist score of a set of entity runs (one model). */
export interface DdrChecklistScore {
  benchmark: 'ddr';
  options: DdrOptions;
  messageWise: DdrAccuracy;
  trajectoryWise: DdrAccuracy;
  /** Top-k curve over message-wise items: k → fractions correct / incorrect / insufficient (spec §3.4). */
  topK: Array<{ k: number; correct: number; incorrect: number; insufficient: number }>;
  perEntity: Array<{
    entityId: string;
    messageWise: DdrEntityContextScore;
    trajectoryWise: DdrEntityContextScore;
    validInsights: number;
    totalInsights: number;
  }>;
  judgements: JudgementTally;
  /** Items whose label an official-code option changed, by option (`unparsed_reply`, `label_case`). */
  changedBy: Record<string, number>;
}

/**
 * Checks every checklist item of every entity against its message-wise insights and its final
 * report through `judge`, and aggregates sample- and item-averaged accuracy.
 * @param runs one entry per entity (entities without a run should be passed with no insights and no
 *   report: with `empty_insights = zero` they score 0 rather than disappearing).
 * @param judge decides `checklist-support`; pending/failed items are excluded from denominators and counted.
 * @param options see {@link DdrOptions}.
 * @returns accuracies as fractions in [0, 1], per-entity detail and a judgement tally.
 * Source: spec §3.4 (`evaluate_qa_with_message_list`, `evaluate_qa_with_context`, `calculate_summary_stats`,
 * `calculate_overall_stats`, `calculate_cumulative_message_stats`), §3.7 item 10, §5.3 row 7.
 */
export async function scoreDdrChecklists(
  runs: readonly DdrEntityRun[],
  judge: Judge,
  options: Partial<DdrOptions> = {},
): Promise<DdrChecklistScore> {
  const opts: DdrOptions = { ...DEFAULT_DDR_OPTIONS, ...options };
  const lenient = opts.lenient === 'always' || (opts.lenient === 'scenario' && opts.scenario.toLowerCase() === '10k');
  const all: Judgement[] = [];
  type Job = { e: number; ctx: 'm' | 't'; i: number };
  const jobs: Job[] = [];
  const perRun = runs.map((r) => {
    const ins = validInsights(r.insights, opts.no_insight_filter);
    const report = (r.report ?? '').trim();
    return { r, ins, report };
  });
  perRun.forEach((p, e) => {
    p.r.checklist.forEach((_, i) => {
      if (p.ins.length) jobs.push({ e, ctx: 'm', i });
      if (p.report) jobs.push({ e, ctx: 't', i });
    });
  });
  const results = await mapLimit(jobs, opts.concurrency, async (job) => {
    const p = perRun[job.e]!;
    const item = p.r.checklist[job.i]!;
    const context = job.ctx === 'm' ? 'message-wise' : 'trajectory-wise';
    const ctx: JudgeContext = {
      itemRef: `entity ${p.r.entityId} / item ${job.i} / ${context}`,
      nativeId: { entity: p.r.entityId, item: job.i, context },
    };
    if (p.r.runId) ctx.runId = p.r.runId;
    const trend =
      opts.scenario.toLowerCase() === 'globem' && opts.globem_check === 'answer' ? trendCategory(item.answer) : null;
    if (trend) {
      const t = await judge.judge(
        'trend-answer',
        job.ctx === 'm' ? { question: item.question, insights: p.ins } : { question: item.question, report: p.report },
        ctx,
      );
      all.push(t);
      return asSupport(t, trend);
    }
    const j = await judge.judge(
      'checklist-support',
      job.ctx === 'm'
        ? { question: item.question, answer: item.answer, insights: p.ins, scenario: opts.scenario, lenient }
        : { question: item.question, answer: item.answer, report: p.report, scenario: opts.scenario, lenient },
      ctx,
    );
    all.push(j);
    return j;
  });
  const byJob = new Map<
    string,
    Pick<Judgement, 'status' | 'judgeId' | 'key'> & {
      verdict: JudgeVerdict<'checklist-support'> | null;
      raw?: string | null;
      promptHash?: string | null;
    }
  >();
  jobs.forEach((job, k) => byJob.set(`${job.e}/${job.ctx}/${job.i}`, results[k]!));

  const contextScore = (e: number, ctx: 'm' | 't'): DdrEntityContextScore => {
    const p = perRun[e]!;
    const hasContext = ctx === 'm' ? p.ins.length > 0 : p.report.length > 0;
    const items: DdrItemResult[] = p.r.checklist.map((item, i) => {
      if (!hasContext) {
        return {
          index: i,
          question: item.question,
          label: 'INSUFFICIENT_INFO',
          supporting: [],
          contradicting: [],
          judgeId: 'none',
          judgementKey: null,
          status: 'no-context',
        };
      }
      const j = byJob.get(`${e}/${ctx}/${i}`)!;
      const v = j.status === 'done' ? j.verdict : null;
      const base: DdrItemResult = {
        index: i,
        question: item.question,
        label: v?.label ?? null,
        supporting: v?.supporting ?? [],
        contradicting: v?.contradicting ?? [],
        judgeId: j.judgeId,
        judgementKey: j.key,
        status: j.status,
      };
      return officialItem(base, j.raw ?? null, j.promptHash ?? null, opts);
    });
    const included = hasContext || opts.empty_insights === 'zero';
    const judged = items.filter(
      (x) => x.label !== null || (opts.failed_judgements === 'count' && x.status === 'error'),
    ).length;
    const correct = items.filter((x) => x.label === 'CORRECT_INFO').length;
    return { entityId: p.r.entityId, included, items, correct, judged, accuracy: judged ? correct / judged : null };
  };
  const perEntity = perRun.map((p, e) => ({
    entityId: p.r.entityId,
    messageWise: contextScore(e, 'm'),
    trajectoryWise: contextScore(e, 't'),
    validInsights: p.ins.length,
    totalInsights: p.r.insights.length,
  }));
  const aggregate = (key: 'messageWise' | 'trajectoryWise'): DdrAccuracy => {
    const scores = perEntity.map((x) => x[key]).filter((s) => s.included);
    const withAcc = scores.filter((s) => s.accuracy !== null);
    const correct = scores.reduce((s, x) => s + x.correct, 0);
    const judged = scores.reduce((s, x) => s + x.judged, 0);
    let pending = 0;
    let errors = 0;
    for (const s of scores) {
      for (const it of s.items) {
        if (it.status === 'pending') pending++;
        else if (it.status === 'error') errors++;
      }
    }
    return {
      sampleAveraged: withAcc.length ? pyStatisticsMean(withAcc.map((x) => x.accuracy!)) : null,
      itemAveraged: judged ? correct / judged : null,
      percent: {
        sampleAveraged: withAcc.length ? pyStatisticsMean(withAcc.map((x) => (x.correct / x.judged) * 100)) : null,
        itemAveraged: judged ? (correct / judged) * 100 : null,
      },
      entities: withAcc.length,
      items: judged,
      correct,
      pending,
      errors,
    };
  };
  const topK = ddrTopK(
    perEntity.filter((x) => x.messageWise.included).flatMap((x) => x.messageWise.items),
    opts.failed_judgements,
  );
  const changedBy: Record<string, number> = {};
  for (const x of perEntity) {
    for (const sc of [x.messageWise, x.trajectoryWise]) {
      if (sc.included) {
        for (const it of sc.items) if (it.changedBy) changedBy[it.changedBy] = (changedBy[it.changedBy] ?? 0) + 1;
      }
    }
  }
  return {
    benchmark: 'ddr',
    options: opts,
    messageWise: aggregate('messageWise'),
    trajectoryWise: aggregate('trajectoryWise'),
    topK,
    perEntity,
    judgements: tallyJudgements(all),
    changedBy,
  };
}

/**
 * The top-k interaction curve over message-wise items: for k = 5, 10, …, 100 the fractions whose supporting (correct)
 * or contradicting (incorrect) message indices all lie below k; the rest are insufficient.
 * @param items message-wise items of the included entities; `failed` whether failed judgements stay in the
 *   denominator (`count`: DDR code, every result is counted) or leave it (`exclude`). Pending items always leave.
 * @returns one point per k (fractions in [0, 1]; zeros when no item counts).
 * Source: DDR_Bench `base_evaluator.calculate_cumulative_message_stats` @ cc0aafb0 (issue 21 item 12).
 */
export function ddrTopK(
  items: readonly DdrItemResult[],
  failed: DdrOptions['failed_judgements'],
): Array<{ k: number; correct: number; incorrect: number; insufficient: number }> {
  const counted = items.filter((x) => x.label !== null || (failed === 'count' && x.status === 'error'));
  const out = [];
  for (let k = 5; k <= 100; k += 5) {
    let c = 0,
      inc = 0;
    for (const it of counted) {
      // Python's max(): a NaN index first stays NaN (never below k), a NaN later is passed over (issue 47 item 9)
      if (it.label === 'CORRECT_INFO' && it.supporting.length && pyMax(it.supporting) < k) c++;
      else if (it.label === 'INCORRECT_INFO' && it.contradicting.length && pyMax(it.contradicting) < k) inc++;
    }
    const n = counted.length || 1;
    out.push({
      k,
      correct: c / n,
      incorrect: inc / n,
      insufficient: counted.length ? (counted.length - c - inc) / n : 0,
    });
  }
  return out;
}

/**
 * One item as DDR's code would label it from the judge's raw reply (LLM or recorded judges only; human and
 * identical-text verdicts have no reply to re-read): under `unparsed_reply = substring | whole-word` the reply is read
 * as DDR reads it ({@link ddrOfficialReading}: Python `json.loads`; the keys of the prompt it answered — a reply to
 * Loupe's prompt (an LLM judgement with a prompt hash) by `label`, any other (recorded, DDR's own) by
 * `context_quality` only; an empty reply a failed call; text by the option's fallback, no indices) — also when Loupe
 * had failed it; under `label_case = exact` a JSON label not spelled exactly counts as none of the three labels (here
 * INSUFFICIENT_INFO: never correct, never incorrect, in the denominator). Marks the item with the option when its
 * label changed.
 * Source: DDR_Bench `_parse_context_quality_result`, `evaluate_qa_with_*` (`if not result`: API_FAILED),
 * `calculate_summary_stats` @ cc0aafb0 (issue 21 items 13, 14; issue 47 items 9–11).
 */
function officialItem(it: DdrItemResult, raw: string | null, promptHash: string | null, o: DdrOptions): DdrItemResult {
  if (raw === null || !/^(llm|file)/.test(it.judgeId)) return it;
  const reread = o.unparsed_reply !== 'error';
  const r = ddrOfficialReading(
    raw,
    reread
      ? {
          json: 'python',
          keys: promptHash ? 'loupe' : 'ddr',
          fallback: o.unparsed_reply === 'whole-word' ? 'whole-word' : 'substring',
        }
      : LEGACY_READING,
  );
  if (!r) return it;
  if (r.kind === 'empty' || r.kind === 'ambiguous') {
    const changed = it.status === 'done';
    return {
      ...it,
      label: null,
      supporting: [],
      contradicting: [],
      status: 'error',
      reading: r.kind,
      ...(changed ? { changedBy: 'unparsed_reply' as const } : {}),
    };
  }
  if (r.kind === 'text') {
    if (!reread) return it;
    const label = r.label as ChecklistLabel;
    const changed = it.status !== 'done' || it.label !== label;
    return {
      ...it,
      label,
      supporting: [],
      contradicting: [],
      status: 'done',
      reading: 'text',
      ...(changed ? { officialLabel: r.label, changedBy: 'unparsed_reply' as const } : {}),
    };
  }
  if (reread) {
    // a JSON reply as DDR reads it: the label and indices of its prompt's keys replace Loupe's reading
    const exact = EXACT_LABELS.has(r.label);
    const relaxed = EXACT_LABELS.has(r.label.trim().toUpperCase())
      ? (r.label.trim().toUpperCase() as ChecklistLabel)
      : null;
    const label: ChecklistLabel | null = exact
      ? (r.label as ChecklistLabel)
      : o.label_case === 'exact'
        ? 'INSUFFICIENT_INFO'
        : relaxed;
    if (label === null) return it;
    const uncounted = !exact && o.label_case === 'exact';
    const before = it.status === 'done' ? it.label : null;
    // counted as changed: a label the exact-case rule dropped, or a verdict Loupe had read otherwise (a reply Loupe had
    // failed and DDR's reading labels is not a change, as for a reply in DDR's own format)
    const changedBy =
      before === label
        ? undefined
        : uncounted && relaxed !== label
          ? ('label_case' as const)
          : before !== null && before !== (relaxed ?? label)
            ? ('unparsed_reply' as const)
            : undefined;
    return {
      ...it,
      label,
      supporting: r.supporting,
      contradicting: r.contradicting,
      status: 'done',
      reading: 'json',
      ...(uncounted ? { officialLabel: r.label } : {}),
      ...(changedBy ? { changedBy } : {}),
    };
  }
  // a JSON reply: DDR's own format (`context_quality`, `supporting_message_indices`) is read here too
  const exact = EXACT_LABELS.has(r.label);
  const relaxed = EXACT_LABELS.has(r.label.trim().toUpperCase())
    ? (r.label.trim().toUpperCase() as ChecklistLabel)
    : null;
  const label: ChecklistLabel | null = exact
    ? (r.label as ChecklistLabel)
    : o.label_case === 'exact'
      ? 'INSUFFICIENT_INFO'
      : relaxed;
  const uncounted = !exact && o.label_case === 'exact';
  if (label === null || (it.status === 'done' && it.label === label)) return it;
  const changed = uncounted && relaxed !== label;
  if (it.status !== 'done') {
    return {
      ...it,
      label,
      supporting: r.supporting,
      contradicting: r.contradicting,
      status: 'done',
      ...(uncounted ? { officialLabel: r.label } : {}),
      ...(changed ? { changedBy: 'label_case' as const } : {}),
    };
  }
  return {
    ...it,
    label,
    ...(uncounted ? { officialLabel: r.label } : {}),
    ...(changed ? { changedBy: 'label_case' as const } : {}),
  };
}

/**
 * GLOBEM's answer category: "It improved." → improved, "It worsened." → worsened, "It remained almost
 * the same." → same; null for anything else.
 * @param answer a ground-truth answer. @returns the category or null.
 */
export function trendCategory(answer: string): 'improved' | 'worsened' | 'same' | null {
  if (/\bimprov/i.test(answer)) return 'improved';
  if (/\bworsen/i.test(answer)) return 'worsened';
  if (/\b(same|remained|unchanged)\b/i.test(answer)) return 'same';
  return null;
}

/** A trend-answer judgement seen as a checklist label (correct iff the category matches exactly). */
function asSupport(
  t: Judgement<'trend-answer'>,
  truth: 'improved' | 'worsened' | 'same',
): Pick<Judgement, 'status' | 'judgeId' | 'key'> & { verdict: JudgeVerdict<'checklist-support'> | null } {
  if (t.status !== 'done' || !t.verdict) return { status: t.status, judgeId: t.judgeId, key: t.key, verdict: null };
  const v = t.verdict;
  const label: ChecklistLabel =
    v.answer === 'no_idea' ? 'INSUFFICIENT_INFO' : v.answer === truth ? 'CORRECT_INFO' : 'INCORRECT_INFO';
  return {
    status: 'done',
    judgeId: t.judgeId,
    key: t.key,
    verdict: {
      label,
      supporting: label === 'CORRECT_INFO' ? v.used : [],
      contradicting: label === 'INCORRECT_INFO' ? v.used : [],
      evidence: '',
      reasoning: `answered ${v.answer}; truth ${truth}. ${v.reasoning}`,
    },
  };
}

/**
 * DDR Table 2's "Overall Avg.": the mean of the 12 cells (2 averaging modes × 2 insight types × 3 scenarios).
 * @param cells the per-scenario scores. @returns the mean of every non-null cell (fraction), null if none.
 * Source: spec §3.4 "Table 2 metrics" (checked on the Claude row: 47.725).
 */
export function ddrOverallAverage(
  cells: ReadonlyArray<Pick<DdrChecklistScore, 'messageWise' | 'trajectoryWise'>>,
): number | null {
  const vals: number[] = [];
  for (const c of cells) {
    for (const a of [c.messageWise, c.trajectoryWise]) {
      for (const v of [a.sampleAveraged, a.itemAveraged]) if (v !== null) vals.push(v);
    }
  }
  return vals.length ? vals.reduce((s, x) => s + x, 0) / vals.length : null;
}

// ------------------------------------------------------------------ exploration coverage / entropy

/** Database exploration of one run. */
export interface DdrExploration {
  /** Distinct `table.column`s accessed. */
  fieldsAccessed: number;
  totalFields: number;
  /** fieldsAccessed / totalFields, in [0, 1]. */
  coverage: number;
  /** −Σ pᵢ log₂ pᵢ over accessed fields, pᵢ = cᵢ / N (bits). */
  entropy: number;
  /** entropy / log₂ n; null when n ≤ 1 (undefined in the paper). */
  normalizedEntropy: number | null;
  /** Access count per field, descending. */
  counts: Array<[string, number]>;
  queries: number;
}

/**
 * Database coverage and normalised exploration entropy from the fields each query touched.
 * @param touched one array of `table.column` names per query (e.g. `DdrQueryRecord.columns` from the
 *   DDR tool set, which parses SQL with node-sql-parser); `totalFields` the database's field count
 *   (paper Table 1: MIMIC 318, 10-K 5,832, GLOBEM 222) or the list of all fields.
 * @returns coverage (fraction), entropy (bits) and normalised entropy.
 * @throws LoupeInputError when totalFields is not positive.
 * Source: DDR paper §4.2 (no code in the repo; spec §3.4 "Metrics described in the paper").
 */
export function ddrExploration(
  touched: ReadonlyArray<readonly string[]>,
  totalFields: number | readonly string[],
): DdrExploration {
  const total = typeof totalFields === 'number' ? totalFields : new Set(totalFields).size;
  if (!(total > 0)) throw new LoupeInputError('totalFields', `must be positive, got ${total}`);
  const counts = new Map<string, number>();
  for (const q of touched) for (const f of new Set(q)) counts.set(f, (counts.get(f) ?? 0) + 1);
  const N = [...counts.values()].reduce((s, x) => s + x, 0);
  let h = 0;
  for (const c of counts.values()) {
    const p = c / N;
    h -= p * Math.log2(p);
  }
  const n = counts.size;
  return {
    fieldsAccessed: n,
    totalFields: total,
    coverage: n / total,
    entropy: h,
    normalizedEntropy: n > 1 ? h / Math.log2(n) : null,
    counts: [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])),
    queries: touched.length,
  };
}

/**
 * {@link ddrExploration} straight from SQL texts (e.g. the `params` of DDR's `sql_calls_*.csv` logs):
 * each query's `table.column`s are extracted with node-sql-parser against the schema (aliases, CTEs and
 * `*` resolved; a word-match fallback when the parser fails).
 * @param sqls the queries in order; `schema` table → columns; `totalFields` default: all columns of `schema`.
 * @returns exploration figures plus how many queries needed the fallback.
 * Source: DDR paper §4.2; field extraction via the DDR tool set's `touchedFields`.
 */
export function ddrExplorationFromSql(
  sqls: readonly string[],
  schema: ReadonlyMap<string, readonly string[]>,
  totalFields?: number,
): DdrExploration & { fallbackQueries: number } {
  const s = new Map([...schema.entries()].map(([t, cs]) => [t, [...cs]]));
  const touched = sqls.map((q) => touchedFields(q, s));
  const total = totalFields ?? [...s.values()].reduce((n, cs) => n + cs.length, 0);
  return {
    ...ddrExploration(
      touched.map((t) => t.columns),
      total,
    ),
    fallbackQueries: touched.filter((t) => t.method === 'fallback').length,
  };
}

// ------------------------------------------------------------------ novelty (Bradley–Terry)

/** One pairwise comparison outcome. */
export interface PairOutcome {
  a: string;
  b: string;
  /** `a`, `b` or `tie`. */
  winner: 'a' | 'b' | 'tie';
}

/** Bradley–Terry fit. */
export interface BradleyTerryFit {
  /** Strength per player, normalised to sum 1 (order of `players`). */
  strengths: Record<string, number>;
  /** Players ranked by strength, strongest first. */
  ranking: string[];
  iterations: number;
  converged: boolean;
  ties: 'half' | 'ignore';
}

/**
 * Fits a Bradley–Terry model, P(i beats j) = pᵢ / (pᵢ + pⱼ), with the shared fit of src/core/eval/bradley-terry.ts
 * (maximum likelihood by Newton–Raphson on θ = log p, no penalty) and reports pᵢ = exp θᵢ / Σⱼ exp θⱼ (sum 1).
 * @param outcomes comparisons; `opts.ties` = `half` (a tie is half a win for each, default) or `ignore`;
 *   `maxIter` (Newton steps, default 100) and `tol` (max |Δθ|, default 1e-10) bound the loop. A comparison of a
 *   player with itself is left out (the player still gets a strength).
 * @returns strengths and ranking (by θ, then name). A player with no wins tends to strength 0 (the MLE does not
 *   exist: the steps stop at `maxIter`, `converged` false).
 * @throws LoupeInputError naming `battle <index>` (of the comparisons that are not self-comparisons) for an empty
 *   name or a winner other than a / b / tie.
 * Source: DDR §3.2 "aggregated with the Bradley–Terry model" (optimiser and tie handling unstated,
 * spec §3.4 — tie handling is an option here); Hunter (2004), "MM algorithms for generalized Bradley–Terry models"
 * (same maximum-likelihood estimate as the MM iteration used before).
 */
export function bradleyTerry(
  outcomes: readonly PairOutcome[],
  opts: { ties?: 'half' | 'ignore'; maxIter?: number; tol?: number } = {},
): BradleyTerryFit {
  const ties = opts.ties ?? 'half';
  const names = [...new Set(outcomes.flatMap((o) => [o.a, o.b]))];
  const fit = fitBradleyTerry(
    outcomes.filter((o) => o.a !== o.b),
    {
      ties,
      players: names,
      ...(opts.maxIter !== undefined ? { maxIter: opts.maxIter } : {}),
      ...(opts.tol !== undefined ? { tol: opts.tol } : {}),
    },
  );
  const theta = fit.logStrengths;
  const top = Math.max(...fit.players.map((p) => theta[p]!));
  const z = fit.players.reduce((s, p) => s + Math.exp(theta[p]! - top), 0);
  const strengths: Record<string, number> = {};
  for (const p of fit.players) strengths[p] = Math.exp(theta[p]! - top) / z;
  const ranking = [...fit.players].sort((x, y) => theta[y]! - theta[x]! || x.localeCompare(y));
  return { strengths, ranking, iterations: fit.iterations, converged: fit.converged, ties };
}

/** Insights of one model on one entity, with the checklist results that used some of them. */
export interface DdrNoveltyInput {
  model: string;
  entityId: string;
  /** Valid message-wise insights (positions = judge indices). */
  insights: readonly string[];
  /** Indices cited by any checklist item (supporting or contradicting). */
  usedIndices: Iterable<number>;
}

/**
 * Novel insights: valid insights not cited by any checklist item's supporting / contradicting list.
 * @param insights valid insights; `used` cited indices. @returns the uncited insights in order.
 * Source: spec §3.4 "Novelty" step 1.
 */
export function novelInsights(insights: readonly string[], used: Iterable<number>): string[] {
  const u = new Set(used);
  return insights.filter((_, i) => !u.has(i));
}

/** Novelty of several models. */
export interface DdrNoveltyScore {
  fit: BradleyTerryFit;
  comparisons: Array<PairOutcome & { entityId: string; swapped: boolean; judgementKey: string | null }>;
  judgements: JudgementTally;
  options: { seed: number; ties: 'half' | 'ignore'; scenario: string };
}

/**
 * Novelty ranking: for every pair of models on the same entity, the judge compares their novel
 * insights (anonymised as A/B, order swapped at random with a seeded generator); outcomes are fitted
 * with {@link bradleyTerry}. Unjudged comparisons are left out.
 * @param inputs one entry per (model, entity); `judge` decides `pairwise-novelty`.
 * @param opts seed (default 0), ties (default `half`), scenario, concurrency (default 4).
 * @returns the fit, every comparison and a judgement tally.
 * Source: spec §3.4 "Novelty" steps 1–3.
 */
export async function scoreDdrNovelty(
  inputs: readonly DdrNoveltyInput[],
  judge: Judge,
  opts: { seed?: number; ties?: 'half' | 'ignore'; scenario?: string; concurrency?: number } = {},
): Promise<DdrNoveltyScore> {
  const seed = opts.seed ?? 0;
  const rand = seededRandom(seed);
  const byEntity = new Map<string, DdrNoveltyInput[]>();
  for (const x of inputs) {
    let l = byEntity.get(x.entityId);
    if (!l) byEntity.set(x.entityId, (l = []));
    l.push(x);
  }
  const pairs: Array<{ entityId: string; a: DdrNoveltyInput; b: DdrNoveltyInput; swapped: boolean }> = [];
  for (const [entityId, l] of [...byEntity.entries()].sort((x, y) => x[0].localeCompare(y[0]))) {
    const sorted = [...l].sort((x, y) => x.model.localeCompare(y.model));
    for (let i = 0; i < sorted.length; i++) {
      for (let j = i + 1; j < sorted.length; j++) {
        pairs.push({ entityId, a: sorted[i]!, b: sorted[j]!, swapped: rand() < 0.5 });
      }
    }
  }
  const js = await mapLimit(pairs, opts.concurrency ?? 4, (p) => {
    const na = novelInsights(p.a.insights, p.a.usedIndices);
    const nb = novelInsights(p.b.insights, p.b.usedIndices);
    const input: { insightsA: string[]; insightsB: string[]; scenario?: string } = p.swapped
      ? { insightsA: nb, insightsB: na }
      : { insightsA: na, insightsB: nb };
    if (opts.scenario) input.scenario = opts.scenario;
    return judge.judge('pairwise-novelty', input, { itemRef: `novelty ${p.entityId}: ${p.a.model} vs ${p.b.model}` });
  });
  const comparisons: DdrNoveltyScore['comparisons'] = [];
  pairs.forEach((p, k) => {
    const j = js[k]!;
    if (j.status !== 'done' || !j.verdict) return;
    const w = j.verdict.winner;
    const winner: PairOutcome['winner'] = w === 'TIE' ? 'tie' : (w === 'A') !== p.swapped ? 'a' : 'b';
    comparisons.push({
      a: p.a.model,
      b: p.b.model,
      winner,
      entityId: p.entityId,
      swapped: p.swapped,
      judgementKey: j.key,
    });
  });
  const ties = opts.ties ?? 'half';
  return {
    fit: bradleyTerry(comparisons, { ties }),
    comparisons,
    judgements: tallyJudgements(js),
    options: { seed, ties, scenario: opts.scenario ?? '' },
  };
}

/**
 * Hallucination rate from judge labels: share of judged insights labelled hallucinated.
 * @param items insights with the evidence the agent saw; `judge` decides `hallucination`.
 * @returns rate (fraction, null when nothing judged), counts and tally.
 * Source: DDR paper §7 / Table 6 (a manual annotation there; here any judge, human included).
 */
export async function scoreDdrHallucination(
  items: ReadonlyArray<{ insight: string; evidence: string; runId?: string }>,
  judge: Judge,
  concurrency = 4,
): Promise<{ rate: number | null; hallucinated: number; judged: number; judgements: JudgementTally }> {
  const js = await mapLimit(items, concurrency, (x) =>
    judge.judge('hallucination', { insight: x.insight, evidence: x.evidence }, x.runId ? { runId: x.runId } : {}),
  );
  const done = js.filter((j) => j.status === 'done' && j.verdict);
  const h = done.filter((j) => j.verdict!.hallucinated).length;
  return {
    rate: done.length ? h / done.length : null,
    hallucinated: h,
    judged: done.length,
    judgements: tallyJudgements(js),
  };
}
