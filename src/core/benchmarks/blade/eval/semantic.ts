/**
 * Conceptual-variable and statistical-model matching for BLADE through a judge, with an
 * identical-text shortcut. Source: spec §1.4.5 (cvars), §1.4.6 (models, model cvars), BLADE
 * `eval/match/{conceptual_variable,model}.py`. BLADE asks one LLM call per type for all pairs with a
 * 5–10 similarity and keeps pairs ≥ 8; we ask the judge one pair at a time for a yes/no
 * "same concept" verdict (cached by the judge), which is recorded as `cvarMatching: 'pairwise'`.
 */
import type { Judge, JudgementStatus } from '../../../eval/judges/types.ts';
import { canonicalText } from '../../../eval/judges/tasks.ts';
import type { BladeConceptualVarSpec, BladeModelSpec } from '../items.ts';

/** Verdict of one pairwise semantic comparison. `match` null = not judged yet (pending / error). */
export interface SemanticVerdict {
  match: boolean | null;
  judgeId: string;
  status: JudgementStatus | 'exact';
}

/** Minimal judge BLADE matching needs; build one from a project {@link Judge} with {@link semanticJudgeFrom}. */
export interface SemanticJudge {
  readonly id: string;
  same(kind: 'conceptual-variable' | 'model', a: string, b: string, context?: string): Promise<SemanticVerdict>;
}

/** True when two texts are identical after canonicalisation (case, whitespace, trailing punctuation). */
export function identicalText(a: string, b: string): boolean {
  return canonicalText(a) === canonicalText(b);
}

/**
 * Adapts a project judge (`src/core/eval/judges`, task `semantic-match`) with the exact shortcut.
 * @param judge any {@link Judge}; `ctx.runId` is passed through for the annotation panel; with `ctx.dataset` every
 *   question carries the native id `{dataset, run, kind, truth, submitted}` (`run` defaults to `runId`), which a
 *   recorded-verdicts judge (`--judge file:`) looks up.
 */
export function semanticJudgeFrom(
  judge: Judge,
  ctx: { runId?: string; dataset?: string; run?: string } = {},
): SemanticJudge {
  return {
    id: judge.id,
    async same(kind, a, b, context) {
      if (identicalText(a, b)) return { match: true, judgeId: 'exact', status: 'exact' };
      // native id of the decision pair (recorded-verdicts judge, issue 21): dataset + run + decision kind + both texts
      const nativeId =
        ctx.dataset !== undefined
          ? { dataset: ctx.dataset, run: ctx.run ?? ctx.runId ?? '', kind, truth: a, submitted: b }
          : undefined;
      const j = await judge.judge(
        'semantic-match',
        { kind, a, b, context },
        { runId: ctx.runId, itemRef: `blade ${kind}: ${a} ~ ${b}`, ...(nativeId ? { nativeId } : {}) },
      );
      return { match: j.status === 'done' && j.verdict ? j.verdict.match : null, judgeId: j.judgeId, status: j.status };
    },
  };
}

/** Judge that only accepts identical text (used when no judge is configured: `--judge none`). */
export const exactOnlySemanticJudge: SemanticJudge = {
  id: 'exact',
  async same(_kind, a, b) {
    return { match: identicalText(a, b), judgeId: 'exact', status: 'exact' };
  },
};

/** Tally of the judgements a score depended on. */
export interface JudgeTally {
  judgeIds: string[];
  done: number;
  exact: number;
  pending: number;
  errors: number;
}

/** An empty {@link JudgeTally}. */
export function newTally(): JudgeTally {
  return { judgeIds: [], done: 0, exact: 0, pending: 0, errors: 0 };
}

/** A memoising wrapper that also counts verdicts into a tally. */
export function countingJudge(j: SemanticJudge, tally: JudgeTally): SemanticJudge {
  const memo = new Map<string, Promise<SemanticVerdict>>();
  return {
    id: j.id,
    same(kind, a, b, context) {
      const key = JSON.stringify([kind, a, b, context ?? '']);
      let p = memo.get(key);
      if (!p) {
        p = j.same(kind, a, b, context).then((v) => {
          if (!tally.judgeIds.includes(v.judgeId)) tally.judgeIds.push(v.judgeId);
          if (v.status === 'exact') tally.exact++;
          else if (v.status === 'done') tally.done++;
          else if (v.status === 'pending') tally.pending++;
          else tally.errors++;
          return v;
        });
        memo.set(key, p);
      }
      return p;
    },
  };
}

// ------------------------------------------------------------------------------------------------
// Conceptual variables (spec §1.4.5)
// ------------------------------------------------------------------------------------------------

export type CvarType = 'IV' | 'DV' | 'Control' | 'Moderator';

/** A submission's conceptual variable (BLADE `EntireAnalysis.cvars`). */
export interface SubmittedCvar {
  type: CvarType;
  description: string;
  columns: string[];
  moderatorOn?: string;
}

/** BLADE's string form of a GT cvar: "IV: c", "DV: c", "Control: c." or "Moderator: c interacting with on variable". */
export function gtCvarString(c: BladeConceptualVarSpec): string {
  if (c.effectiveType === 'Moderator') return `Moderator: ${c.concept} interacting with ${c.on} variable`;
  if (c.effectiveType === 'Control') return `Control: ${c.concept}.`;
  return `${c.effectiveType}: ${c.concept}`;
}

/** BLADE's string form of an agent cvar: "IV: d.", "DV: d.", "Control: d." or "Moderator: d interacting with on variable". */
export function subCvarString(c: SubmittedCvar): string {
  if (c.type === 'Moderator') return `Moderator: ${c.description} interacting with ${c.moderatorOn ?? ''} variable`;
  return `${c.type}: ${c.description}.`;
}

export interface CvarMatchResult {
  /** Matched pairs as indices into the GT / submission lists passed in. */
  pairs: { gt: number; sub: number }[];
  /** Number of submission variables sent for comparison (N₂: only types the GT has). */
  sent: number;
  /** Pairs not judged yet. */
  unjudged: number;
}

/**
 * Matches cvars type by type. Submission variables of a type the GT lacks are never compared nor
 * counted (BLADE behaviour, spec §1.4.5).
 * @param typeOf how to read a type from each side (effective type, or IV/DV/Control for model cvars).
 */
export async function matchCvarsByType<G, S>(
  gt: G[],
  sub: S[],
  gtType: (g: G) => string,
  subType: (s: S) => string,
  gtText: (g: G) => string,
  subText: (s: S) => string,
  judge: SemanticJudge,
  context?: string,
): Promise<CvarMatchResult> {
  const pairs: { gt: number; sub: number }[] = [];
  let sent = 0;
  let unjudged = 0;
  const types = [...new Set(gt.map(gtType))];
  for (const t of types) {
    const gi = gt.map((g, i) => [g, i] as const).filter(([g]) => gtType(g) === t);
    const si = sub.map((s, i) => [s, i] as const).filter(([s]) => subType(s) === t);
    sent += si.length;
    const verdicts = await Promise.all(
      gi.flatMap(([g, a]) =>
        si.map(async ([s, b]) => ({
          a,
          b,
          v: await judge.same('conceptual-variable', gtText(g), subText(s), context),
        })),
      ),
    );
    for (const { a, b, v } of verdicts) {
      if (v.match === true) pairs.push({ gt: a, sub: b });
      else if (v.match === null) unjudged++;
    }
  }
  return { pairs, sent, unjudged };
}

// ------------------------------------------------------------------------------------------------
// Models (spec §1.4.6)
// ------------------------------------------------------------------------------------------------

/** Model name and columns read from model code. */
export interface ExtractedModel {
  name: string;
  columns: string[];
  /** `static` = recognised call; `unknown` = no recognised modelling call. */
  how: 'static' | 'unknown';
}

const MODEL_CALLS: [RegExp, string | ((code: string) => string)][] = [
  [
    /\bZeroInflated(?:Poisson|NegativeBinomialP)\s*\(/,
    (c) =>
      /ZeroInflatedPoisson/.test(c) ? 'Zero-Inflated Poisson Regression' : 'Zero-Inflated Negative Binomial Regression',
  ],
  [/\b(?:smf\.)?mixedlm\s*\(|\bMixedLM\s*\(/i, 'Linear Mixed Effects Model'],
  [/\bsmf\.glm\s*\(|\bsm\.GLM\s*\(|\bGLM\s*\(/, (c) => glmName(c)],
  [/\bsmf\.logit\s*\(|\bsm\.Logit\s*\(|\bLogisticRegression\s*\(/, 'Logistic Regression'],
  [/\bsmf\.probit\s*\(|\bsm\.Probit\s*\(/, 'Probit Regression'],
  [/\bsmf\.poisson\s*\(|\bsm\.Poisson\s*\(/, 'Poisson Regression'],
  [/\bsmf\.negativebinomial\s*\(|\bNegativeBinomial\s*\(/, 'Negative Binomial Regression'],
  [/\bsmf\.ordinal|\bOrderedModel\s*\(/, 'Ordinal Regression'],
  [/\bsmf\.(?:ols|wls|gls)\s*\(|\bsm\.(?:OLS|WLS|GLS)\s*\(|\bLinearRegression\s*\(/, 'Linear Regression'],
  [/\bsmf\.quantreg\s*\(/, 'Quantile Regression'],
  [/\banova_lm\s*\(|\bf_oneway\s*\(/, 'ANOVA'],
  [/\bttest_(?:ind|rel|1samp)\s*\(/, 'T-test'],
  [/\bchi2_contingency\s*\(/, 'Chi-squared Test'],
  [/\bpearsonr\s*\(/, 'Pearson Correlation'],
  [/\bspearmanr\s*\(/, 'Spearman Correlation'],
  [/\bmannwhitneyu\s*\(/, 'Mann-Whitney U Test'],
  [/\bfisher_exact\s*\(/, 'Fisher exact test'],
  [/\bkruskal\s*\(/, 'Kruskal-Wallis Test'],
  [/\bRandomForest(?:Regressor|Classifier)\s*\(/, 'Random Forest'],
];

function glmName(code: string): string {
  if (/Binomial\s*\(/.test(code)) return 'Logistic Regression';
  if (/Poisson\s*\(/.test(code)) return 'Poisson Regression';
  if (/NegativeBinomial\s*\(/.test(code)) return 'Negative Binomial Regression';
  if (/Gamma\s*\(/.test(code)) return 'Gamma Regression';
  return 'Generalized Linear Model';
}

/**
 * Reads the model family and the columns it uses from model code without an LLM: the first
 * recognised modelling call names the model; columns are identifiers of formula strings
 * (`'y ~ a + C(b) * c'`) and quoted names that are columns of the final data frame.
 * BLADE asks an LLM for this (spec §1.4.6 step 1); the judge is not needed for recognised code.
 * @param columns columns of the transformed df (used to keep only real columns).
 */
export function extractModel(code: string, columns: string[]): ExtractedModel {
  let name = '';
  for (const [re, n] of MODEL_CALLS) {
    if (re.test(code)) {
      name = typeof n === 'string' ? n : n(code);
      break;
    }
  }
  const colSet = new Set(columns);
  const found: string[] = [];
  const add = (c: string) => {
    if (colSet.has(c) && !found.includes(c)) found.push(c);
  };
  for (const m of code.matchAll(/(["'])((?:(?!\1).)*~(?:(?!\1).)*)\1/g)) {
    for (const id of (m[2] ?? '').matchAll(/Q\(\s*["']([^"']+)["']\s*\)|[A-Za-z_][A-Za-z0-9_.]*/g)) add(id[1] ?? id[0]);
  }
  for (const m of code.matchAll(/["']([^"'\n]+)["']/g)) add(m[1]!);
  return { name: name || 'Unknown model', columns: found, how: name ? 'static' : 'unknown' };
}

/** GT model specs grouped by `specification.strip().lower()`; the first of each group represents it. */
export function uniqueModelNames(models: BladeModelSpec[]): { name: string; specs: BladeModelSpec[] }[] {
  const m = new Map<string, BladeModelSpec[]>();
  for (const s of models) {
    const k = s.specification.trim().toLowerCase();
    m.set(k, [...(m.get(k) ?? []), s]);
  }
  return [...m].map(([name, specs]) => ({ name, specs }));
}

/** GT cvars of a model: any associated orig column in the cvar's orig columns, or derived in derived (spec §1.2.3). */
export function gtModelCvars(model: BladeModelSpec, cvars: BladeConceptualVarSpec[]): BladeConceptualVarSpec[] {
  return cvars.filter(
    (c) =>
      model.columnsOrig.some((x) => c.columnsOrig.includes(x)) ||
      model.columnsDerived.some((x) => c.columnsDerived.includes(x)),
  );
}
