/**
 * numpy's and CPython's arithmetic where the benchmarks' own code relies on it, bit for bit (issue 47):
 * numpy's pairwise summation (`np.sum`, `np.mean`, `ndarray.mean` over float64), numpy's default (`'linear'`)
 * quantile, Python's exact `statistics.mean`, Python's `max()` over numbers, `str.strip()`, and a reader of JSON with
 * Python `json.loads`' extensions (`NaN`, `Infinity`, `-Infinity`).
 * Pinned versions checked on these machines: numpy 1.24.2, CPython 3.11.2 (Debian).
 * Sources: numpy `numpy/core/src/umath/loops_utils.h.src` (`@TYPE@_pairwise_sum`, `PW_BLOCKSIZE` 128, 8-way unroll;
 * `numpy/_core/...` since numpy 2), the reduction buffer `NPY_BUFSIZE` 8192 (`numpy/core/include/numpy/ndarraytypes.h`),
 * `numpy/lib/function_base.py` (`_quantile`, `_get_indexes`, `_lerp`, method `linear`); CPython `Lib/statistics.py`
 * (`mean`, `_sum`, `_exact_ratio`, `_convert`), `Lib/json/decoder.py` + `Modules/_json.c` (`scan_once`,
 * `parse_constant`, `NUMBER_RE`), `Objects/unicodectype.c` (`_PyUnicode_IsWhitespace`).
 */

/** numpy's `PW_BLOCKSIZE`: blocks of at most this many elements are summed with an 8-way unrolled loop. */
export const PW_BLOCKSIZE = 128;
/** numpy's default ufunc buffer size (`NPY_BUFSIZE`): a float64 add-reduction is done in chunks of this many elements. */
export const NPY_BUFSIZE = 8192;

/**
 * numpy's `pairwise_sum` of `xs[lo .. lo+n)`: below 8 elements a plain loop from 0.0; up to 128 eight partial sums
 * combined as `((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))` and the remainder added in order; above, split at
 * `n/2` rounded down to a multiple of 8 and the halves summed recursively.
 * @param xs float64 values; `lo`, `n` the slice (defaults: all). @returns the sum as numpy computes it for one buffer.
 * Source: numpy `loops_utils.h.src` `@TYPE@_pairwise_sum` (numpy 1.24.2; unchanged in 2.x under `numpy/_core`).
 */
export function pairwiseSum(xs: ArrayLike<number>, lo = 0, n = xs.length - lo): number {
  if (n < 8) {
    let res = 0;
    for (let i = 0; i < n; i++) res += xs[lo + i]!;
    return res;
  }
  if (n <= PW_BLOCKSIZE) {
    const r = [xs[lo]!, xs[lo + 1]!, xs[lo + 2]!, xs[lo + 3]!, xs[lo + 4]!, xs[lo + 5]!, xs[lo + 6]!, xs[lo + 7]!];
    let i = 8;
    for (; i < n - (n % 8); i += 8) for (let j = 0; j < 8; j++) r[j]! += xs[lo + i + j]!;
    let res = r[0]! + r[1]! + (r[2]! + r[3]!) + (r[4]! + r[5]! + (r[6]! + r[7]!));
    for (; i < n; i++) res += xs[lo + i]!;
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return pairwiseSum(xs, lo, n2) + pairwiseSum(xs, lo + n2, n - n2);
}

/**
 * `np.sum(np.asarray(xs, dtype=float64))` of a 1-D contiguous array: the reduction starts from the identity 0.0 and adds
 * the pairwise sum of each buffer of 8192 elements in turn. (Measured against numpy 1.24.2 on random arrays of 3 to
 * 40,000 elements: equal on every one; `xs[0] + pairwise(rest)` is not numpy's order.)
 * @returns the float64 sum (0 for an empty list).
 */
export function npSum(xs: ArrayLike<number>): number {
  let out = 0;
  for (let s = 0; s < xs.length; s += NPY_BUFSIZE) out += pairwiseSum(xs, s, Math.min(NPY_BUFSIZE, xs.length - s));
  return out;
}

/**
 * `np.mean(xs)` / `np.asarray(xs).mean()` over float64: {@link npSum} divided by the count.
 * @returns NaN for an empty list (numpy warns "Mean of empty slice" and returns nan).
 */
export function npMean(xs: ArrayLike<number>): number {
  return xs.length ? npSum(xs) / xs.length : NaN;
}

/**
 * `np.quantile(xs, q)` with numpy's default method `'linear'` (Hyndman & Fan 7): virtual index `(n−1)·q`, neighbours
 * `floor` and `floor+1` (both the last element at or past the end), `gamma = index − floor`, and numpy's `_lerp`:
 * `a + (b−a)·γ`, but `b − (b−a)·(1−γ)` where `γ ≥ 0.5`. Any NaN in `xs` gives NaN (numpy sorts NaN last and checks it).
 * @param q in [0, 1]. @returns NaN for an empty list.
 * @throws RangeError when q is outside [0, 1] (numpy raises ValueError).
 * Source: numpy 1.24.2 `numpy/lib/function_base.py` `_quantile`, `_get_indexes`, `_get_gamma`, `_lerp`.
 */
export function npQuantile(xs: readonly number[], q: number): number {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`Quantiles must be in the range [0, 1], got ${q}`);
  const n = xs.length;
  if (!n) return NaN;
  if (xs.some((x) => Number.isNaN(x))) return NaN;
  const s = Float64Array.from(xs).sort();
  const virtual = (n - 1) * q;
  let prev = Math.floor(virtual);
  let next = prev + 1;
  if (virtual >= n - 1) prev = next = -1;
  const gamma = virtual - prev;
  const a = s[prev < 0 ? n + prev : prev]!;
  const b = s[next < 0 ? n + next : next]!;
  const diff = b - a;
  return gamma >= 0.5 ? b - diff * (1 - gamma) : a + diff * gamma;
}

// ------------------------------------------------------------------ exact arithmetic over doubles

const F64 = new Float64Array(1);
const U64 = new BigUint64Array(F64.buffer);

/** A finite double as an integer multiple of 2^-1074 (exact). */
function scaledInt(x: number): bigint {
  F64[0] = x;
  const bits = U64[0]!;
  const neg = bits >> 63n === 1n;
  const e = Number((bits >> 52n) & 0x7ffn);
  const m = bits & 0xfffffffffffffn;
  const v = e === 0 ? m : (m | (1n << 52n)) << BigInt(e - 1);
  return neg ? -v : v;
}

/** 2^k as a double, for integer k in [-1074, 1023] (exact, built from its bits). */
function pow2(k: number): number {
  if (k >= -1022) U64[0] = BigInt(k + 1023) << 52n;
  else U64[0] = 1n << BigInt(k + 1074);
  return F64[0]!;
}

const bitLength = (v: bigint): number => (v === 0n ? 0 : v.toString(2).length);

/**
 * The double nearest to the rational `p / q` (round half to even), as CPython's `int / int` and `float(Fraction)` give.
 * @param p numerator; `q` positive denominator. @returns ±Infinity past the largest double, 0 below the smallest.
 * @throws RangeError when q ≤ 0.
 */
export function ratioToDouble(p: bigint, q: bigint): number {
  if (q <= 0n) throw new RangeError('ratioToDouble: the denominator must be positive');
  if (p === 0n) return 0;
  const neg = p < 0n;
  let a = neg ? -p : p;
  let b = q;
  const e = bitLength(a) - bitLength(b) - 55;
  if (e > 0) b <<= BigInt(e);
  else a <<= BigInt(-e);
  const quo = a / b; // 54 to 56 bits; value = (quo + rem/b) · 2^e
  const sticky = a % b !== 0n;
  const L = bitLength(quo);
  const lsb = Math.max(L - 53 + e, -1074);
  const d = lsb - e; // ≥ 1
  let mant = quo >> BigInt(d);
  const rest = quo & ((1n << BigInt(d)) - 1n);
  const half = 1n << BigInt(d - 1);
  if (rest > half || (rest === half && (sticky || (mant & 1n) === 1n))) mant += 1n;
  let r: number;
  if (lsb > 1023 - 52) r = Number(mant) * pow2(1023) * pow2(lsb - 1023);
  else r = Number(mant) * pow2(lsb);
  return neg ? -r : r;
}

/**
 * Python's `statistics.mean(xs)` over floats (and ints): the exact rational sum of the values (`_sum` adds
 * `as_integer_ratio()`s), divided by the count and rounded once to the nearest double. With a NaN or infinity the
 * non-finite values alone are added as floats in order (from 0) and divided by the count, as `_sum` does.
 * @returns the mean. @throws RangeError for an empty list (Python raises StatisticsError).
 * Source: CPython 3.11 `Lib/statistics.py` `mean`, `_sum`, `_exact_ratio`, `_convert`.
 */
export function pyStatisticsMean(xs: readonly number[]): number {
  if (!xs.length) throw new RangeError('mean requires at least one data point');
  if (xs.some((x) => !Number.isFinite(x))) {
    let t = 0;
    for (const x of xs) if (!Number.isFinite(x)) t += x;
    return t / xs.length;
  }
  let s = 0n;
  for (const x of xs) s += scaledInt(x);
  return ratioToDouble(s, BigInt(xs.length) << 1074n);
}

/**
 * Python's `max(xs)` over numbers: the first element, replaced by each later one that compares greater (`>`); so a
 * NaN first stays, a NaN later is skipped. Booleans count as 0 / 1 as in Python.
 * @returns the maximum. @throws RangeError for an empty list (Python raises ValueError).
 */
export function pyMax(xs: ReadonlyArray<number | boolean>): number {
  if (!xs.length) throw new RangeError('max() arg is an empty sequence');
  let m = Number(xs[0]);
  for (let i = 1; i < xs.length; i++) {
    const v = Number(xs[i]);
    if (v > m) m = v;
  }
  return m;
}

const PY_WHITESPACE =
  '\t\n\u000b\u000c\r\u001c\u001d\u001e\u001f \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';

/**
 * Python's `str.strip()` with no argument: removes the characters `str.isspace()` accepts from both ends (not U+FEFF,
 * unlike JavaScript's `trim`; U+001C–U+001F and U+0085 included).
 * Source: CPython `Objects/unicodectype.c` `_PyUnicode_IsWhitespace`.
 */
export function pyStrip(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && PY_WHITESPACE.includes(s[a]!)) a++;
  while (b > a && PY_WHITESPACE.includes(s[b - 1]!)) b--;
  return s.slice(a, b);
}

// ------------------------------------------------------------------ json.loads

/** Why {@link pyJsonLoads} refused a text: `decode` is Python's `json.JSONDecodeError`; `value` a `ValueError` that is not (an integer past Python's 4300-digit limit); `recursion` Python's `RecursionError` (nesting past Python's default limit). */
export class PyJsonError extends Error {
  readonly kind: 'decode' | 'value' | 'recursion';
  readonly pos: number;
  constructor(kind: 'decode' | 'value' | 'recursion', message: string, pos: number) {
    super(`${message}: char ${pos}`);
    this.kind = kind;
    this.pos = pos;
  }
}

/** A value `json.loads` returns: Python ints become numbers (exact below 2^53), objects have no prototype. */
export type PyJson = null | boolean | number | string | PyJson[] | { [k: string]: PyJson };

const WS = ' \t\n\r';
const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/y;
/** CPython's default recursion limit leaves this much nesting to the C scanner (approximate). */
const MAX_DEPTH = 990;

/**
 * Python's `json.loads(text)` with its defaults: standard JSON plus the constants `NaN`, `Infinity` and `-Infinity`
 * (`parse_constant`), strict strings (no raw control characters), duplicate keys keeping the last, whitespace only
 * ` \t\n\r`, no trailing data.
 * @param text the document. @returns the value.
 * @throws PyJsonError `decode` where Python raises `JSONDecodeError` (position as Python's), `value` for an integer of
 *   more than 4300 digits, `recursion` for nesting deeper than {@link MAX_DEPTH}.
 * Source: CPython 3.11 `Lib/json/decoder.py` (`JSONDecoder.decode`, `raw_decode`, `WHITESPACE`), `Modules/_json.c`
 * (`scan_once_unicode`, `scanstring_unicode`, `_match_number_unicode`).
 */
export function pyJsonLoads(text: string): PyJson {
  let i = 0;
  const fail = (msg: string, at = i): never => {
    throw new PyJsonError('decode', msg, at);
  };
  const ws = () => {
    while (i < text.length && WS.includes(text[i]!)) i++;
  };
  const str = (): string => {
    // i is just after the opening quote
    const start = i - 1;
    let out = '';
    for (;;) {
      if (i >= text.length) fail('Unterminated string starting at', start);
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return out;
      }
      if (c < 0x20) fail('Invalid control character at');
      if (c !== 0x5c) {
        out += text[i++];
        continue;
      }
      i++;
      if (i >= text.length) fail('Unterminated string starting at', start);
      const e = text[i]!;
      const simple: Record<string, string> = {
        '"': '"',
        '\\': '\\',
        '/': '/',
        b: '\b',
        f: '\f',
        n: '\n',
        r: '\r',
        t: '\t',
      };
      if (e in simple) {
        out += simple[e];
        i++;
        continue;
      }
      if (e !== 'u') fail('Invalid \\escape', i - 1);
      const hex = text.slice(i + 1, i + 5);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('Invalid \\uXXXX escape', i - 1);
      out += String.fromCharCode(parseInt(hex, 16));
      i += 5;
    }
  };
  const value = (depth: number): PyJson => {
    if (depth > MAX_DEPTH) throw new PyJsonError('recursion', 'maximum recursion depth exceeded', i);
    if (i >= text.length) fail('Expecting value');
    const c = text[i]!;
    if (c === '"') {
      i++;
      return str();
    }
    if (c === '{') {
      i++;
      const obj = Object.create(null) as Record<string, PyJson>;
      ws();
      if (text[i] === '}') {
        i++;
        return obj;
      }
      for (;;) {
        if (text[i] !== '"') fail('Expecting property name enclosed in double quotes');
        i++;
        const key = str();
        ws();
        if (text[i] !== ':') fail("Expecting ':' delimiter");
        i++;
        ws();
        obj[key] = value(depth + 1);
        ws();
        if (text[i] === '}') {
          i++;
          return obj;
        }
        if (text[i] !== ',') fail("Expecting ',' delimiter");
        i++;
        ws();
      }
    }
    if (c === '[') {
      i++;
      const arr: PyJson[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value(depth + 1));
        ws();
        if (text[i] === ']') {
          i++;
          return arr;
        }
        if (text[i] !== ',') fail("Expecting ',' delimiter");
        i++;
        ws();
      }
    }
    for (const [word, v] of [
      ['null', null],
      ['true', true],
      ['false', false],
      ['NaN', NaN],
      ['Infinity', Infinity],
      ['-Infinity', -Infinity],
    ] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return v;
      }
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) return fail('Expecting value');
    const at = i;
    i += m[0].length;
    if (!m[1] && !m[2]) {
      const digits = m[0].replace('-', '').length;
      if (digits > 4300) {
        throw new PyJsonError('value', 'Exceeds the limit (4300 digits) for integer string conversion', at);
      }
      return Number(m[0]) + 0; // a Python int: "-0" is 0
    }
    return Number(m[0]);
  };
  ws();
  const v = value(0);
  ws();
  if (i !== text.length) fail('Extra data');
  return v;
}

/**
 * Python's left-to-right sum (`sum(xs)`, numpy's reduce over an object array, `functools.reduce(add)`): the first
 * element, then each next one added.
 * @param a the values. @returns their sum; 0 for none.
 */
export function sequentialSum(a: ArrayLike<number>): number {
  if (a.length === 0) return 0;
  let s = a[0]!;
  for (let i = 1; i < a.length; i++) s += a[i]!;
  return s;
}
