/**
 * Tokenizers and the chunk splitter of the documentation rankers.
 * - `longtaTokens`: LangChain `BM25Retriever`'s default preprocessing, `text.split()` (whitespace,
 *   case kept). Source: spec §2.3 `retriever`.
 * - `codebookTokens`: Loupe's default: case-insensitive word tokens that keep variable names such as
 *   `WTMEC2YR`, `RIDAGEYR`, `BMXBMI`, `A_AGE` whole, keep decimals (`40.3`) whole, drop English stop
 *   words and strip plural endings.
 * - `splitChunks`: a port of LangChain `RecursiveCharacterTextSplitter` (separators
 *   `["\n\n", "\n", " ", ""]`, keep_separator = start, strip_whitespace) returning offsets.
 */

/** Whitespace tokens, case kept (Python `str.split()`). */
export function longtaTokens(text: string): string[] {
  const out = text.split(/\s+/);
  if (out.length && out[0] === '') out.shift();
  if (out.length && out[out.length - 1] === '') out.pop();
  return out;
}

const STOP = new Set(
  (
    'an and are as at be been being but by can could did do does for from had has have how if in into is it its ' +
    'of on or that the their them there these they this those to was were what when where which while who whom why ' +
    'will with would than then so such not no nor only own same too very s t just should now also any each other ' +
    'about above after again against all am both between during further here more most over under until up down out ' +
    'off once through few some me my we our you your he him his she her'
  ).split(' '),
);

/** True when a lowercase token is an English stop word dropped by {@link codebookTokens}. */
export function isStopWord(t: string): boolean {
  return STOP.has(t);
}

/**
 * Light plural stemmer (Harman's S-stemmer) for letter-only tokens: `ies`→`y`, `es`→`e`, `s`→``,
 * leaving `ss`/`us`/`is` endings and short words alone.
 */
export function stem(t: string): string {
  if (t.length <= 3 || !/^[a-z]+$/.test(t)) return t;
  if (t.endsWith('ies') && !t.endsWith('eies') && !t.endsWith('aies')) return t.slice(0, -3) + 'y';
  if (t.endsWith('es') && !t.endsWith('aes') && !t.endsWith('ees') && !t.endsWith('oes')) return t.slice(0, -1);
  if (t.endsWith('s') && !t.endsWith('us') && !t.endsWith('ss') && !t.endsWith('is')) return t.slice(0, -1);
  return t;
}

const WORD = /[\p{L}\p{N}_]+(?:\.\d+)*/gu;

/**
 * Words of analytic questions that say what to compute, not what to look up ("What percentage of …
 * had …"); dropped from default-mode queries (documents keep them).
 */
const QUESTION_WORDS = new Set([
  'percentage',
  'percent',
  'prevalence',
  'proportion',
  'overall',
  'among',
  'given',
  'average',
]);

/**
 * Survey-documentation synonyms for default-mode queries: a question's words → the words codebooks use
 * (NHANES-style: "men and women" are coded as gender, "hypertension" is "high blood pressure", …).
 * Keys and values are in {@link codebookTokens} form; expansions get weight {@link SYNONYM_WEIGHT}.
 */
const SURVEY_SYNONYMS: Record<string, string[]> = {
  men: ['gender', 'male'],
  man: ['gender', 'male'],
  women: ['gender', 'female'],
  woman: ['gender', 'female'],
  male: ['gender'],
  female: ['gender'],
  sex: ['gender'],
  hypertension: ['high', 'blood', 'pressure'],
  obesity: ['body', 'mass', 'index', 'bmi'],
  obese: ['body', 'mass', 'index', 'bmi'],
  income: ['poverty', 'ratio'],
  poverty: ['income'],
  education: ['grade', 'schooling'],
  depression: ['depressed', 'hopeless'],
  diabetes: ['sugar', 'insulin'],
  seafood: ['fish', 'shellfish'],
  calory: ['energy', 'kcal'],
  calorie: ['energy', 'kcal'],
  youth: ['child', 'age'],
  adult: ['age'],
};
/** Weight of a synonym relative to a word of the query. */
export const SYNONYM_WEIGHT = 0.5;

/**
 * Default-mode query terms: {@link codebookTokens} without question words, each distinct term once
 * (weight 1), plus survey synonyms (weight {@link SYNONYM_WEIGHT}) not already in the query when
 * `expand` (default true).
 * @returns terms with weights, in first-seen order.
 */
export function codebookQueryTerms(query: string, expand = true): Array<{ term: string; weight: number }> {
  const out = new Map<string, number>();
  const toks = codebookTokens(query);
  const kept = toks.filter((t) => !QUESTION_WORDS.has(t));
  for (const t of kept.length ? kept : toks) out.set(t, 1);
  for (const t of expand ? kept : []) {
    for (const syn of SURVEY_SYNONYMS[t] ?? []) if (!out.has(syn)) out.set(syn, SYNONYM_WEIGHT);
  }
  return [...out].map(([term, weight]) => ({ term, weight }));
}

/**
 * Codebook-aware tokens: lowercase runs of letters, digits and `_` (so `WTMEC2YR` → `wtmec2yr`,
 * `A_AGE` → `a_age`), decimals kept whole (`40.3`), stop words dropped, plurals stripped.
 * @param text any text.
 * @returns tokens in order (may repeat).
 */
export function codebookTokens(text: string): string[] {
  const out: string[] = [];
  for (const m of text.toLowerCase().matchAll(WORD)) {
    const w = m[0];
    if (STOP.has(w)) continue;
    out.push(stem(w));
  }
  return out;
}

/** One chunk of a unit: `[start, end)` character offsets into the unit text. */
export interface ChunkSpan {
  start: number;
  end: number;
}

/**
 * Splits text like LangChain `RecursiveCharacterTextSplitter(chunk_size, chunk_overlap)` (default
 * separators, keep_separator = "start", strip_whitespace = true, length = UTF-16 code units where
 * Python counts code points).
 * @param text the unit text.
 * @param size chunk size in characters (> 0).
 * @param overlap chunk overlap in characters (< size).
 * @returns chunk spans in order; `text.slice(start, end)` is the chunk LangChain would return.
 */
export function splitChunks(text: string, size: number, overlap: number): ChunkSpan[] {
  const out: ChunkSpan[] = [];
  splitRec(text, 0, text.length, ['\n\n', '\n', ' ', ''], size, overlap, out);
  return out;
}

function splitRec(
  text: string,
  lo: number,
  hi: number,
  seps: string[],
  size: number,
  overlap: number,
  out: ChunkSpan[],
): void {
  let sep = seps[seps.length - 1] ?? '';
  let rest: string[] = [];
  for (let i = 0; i < seps.length; i++) {
    const s = seps[i]!;
    if (s === '') {
      sep = s;
      break;
    }
    const at = text.indexOf(s, lo);
    if (at >= 0 && at + s.length <= hi) {
      sep = s;
      rest = seps.slice(i + 1);
      break;
    }
  }
  // splits with the separator kept at the start of each following piece
  const splits: ChunkSpan[] = [];
  if (sep === '') {
    for (let i = lo; i < hi; i++) splits.push({ start: i, end: i + 1 });
  } else {
    let start = lo;
    let from = lo;
    for (;;) {
      const at = text.indexOf(sep, from);
      if (at < 0 || at + sep.length > hi) break;
      if (at > start) splits.push({ start, end: at });
      start = at;
      from = at + sep.length;
    }
    if (hi > start) splits.push({ start, end: hi });
  }
  let good: ChunkSpan[] = [];
  for (const s of splits) {
    if (s.end - s.start < size) {
      good.push(s);
    } else {
      if (good.length) {
        merge(text, good, size, overlap, out);
        good = [];
      }
      if (!rest.length) pushStripped(text, s.start, s.end, out);
      else splitRec(text, s.start, s.end, rest, size, overlap, out);
    }
  }
  if (good.length) merge(text, good, size, overlap, out);
}

function pushStripped(text: string, start: number, end: number, out: ChunkSpan[]): void {
  while (start < end && /\s/.test(text[start]!)) start++;
  while (end > start && /\s/.test(text[end - 1]!)) end--;
  if (end > start) out.push({ start, end });
}

function merge(text: string, splits: ChunkSpan[], size: number, overlap: number, out: ChunkSpan[]): void {
  // LangChain `_merge_splits` with separator "" (keep_separator): contiguous pieces, so a doc is a slice.
  let cur: ChunkSpan[] = [];
  let head = 0; // index of first piece of cur in a queue-like way
  let total = 0;
  for (const d of splits) {
    const len = d.end - d.start;
    if (total + len > size) {
      if (cur.length - head > 0) {
        pushStripped(text, cur[head]!.start, cur[cur.length - 1]!.end, out);
        while (total > overlap || (total + len > size && total > 0)) {
          total -= cur[head]!.end - cur[head]!.start;
          head++;
        }
      }
    }
    cur.push(d);
    total += len;
    if (head > 1024) {
      cur = cur.slice(head);
      head = 0;
    }
  }
  if (cur.length - head > 0) pushStripped(text, cur[head]!.start, cur[cur.length - 1]!.end, out);
}
