/**
 * A small reader for Python literals, the subset `ast.literal_eval` accepts that benchmark answers use:
 * numbers (int, float, exponent, underscores, hex/octal/binary), strings (single, double, triple
 * quotes; r/b/u prefixes), `True`/`False`/`None`, lists, tuples, sets and dicts, unary `+`/`-`.
 * Complex numbers are rejected unless `{ python: true }` (then they are values, as `literal_eval` returns them;
 * LongTA's normaliser then drops them). Source: CPython 3.11 `Lib/ast.py` `literal_eval`.
 */
import { cpythonSetOrder, type PyNumber } from './cpython-set.ts';

/**
 * A Python literal value: tuples and sets become arrays, dicts become `PyDict` (keys in order). Under
 * `{ python: true }` an integer beyond 2^53 stays exact (`bigint`) and a complex number is a {@link PyComplex}.
 */
export type PyLiteral = number | bigint | string | boolean | null | PyComplex | PyLiteral[] | PyDict;
/** A Python complex number (`5j`, `1+2j`), only under `{ python: true }`. */
export interface PyComplex {
  readonly kind: 'complex';
  readonly re: number;
  readonly im: number;
}
/**
 * How closely to follow CPython. `python: false` (Loupe's readable reader): sets keep source order and duplicates,
 * complex literals are refused, integers become doubles. `python: true`: `set(...)` semantics (duplicates by numeric
 * equality dropped, `1 == True`, CPython's iteration order for numbers: `cpython-set.ts`), complex values, exact
 * big integers and Python 3.11's 4,300-digit limit on decimal integer literals.
 */
export interface PyLiteralOptions {
  python?: boolean;
}
/** A Python dict literal, keys rendered as strings. */
export interface PyDict {
  readonly kind: 'dict';
  readonly entries: Array<[string, PyLiteral]>;
}

class PySyntaxError extends Error {}

/**
 * Parses `text` the way Python's `ast.literal_eval` would (the subset described above).
 * @param text source text (leading/trailing whitespace allowed).
 * @returns the value, or `undefined` when `literal_eval` would raise (syntax error, a name, an operator).
 * Source: Python `ast.literal_eval`, used by LongTA `utils.normalize_answer_value` (spec §2.4).
 * @example parsePyLiteral("[1.0, 2.0]") // [1, 2]
 */
export function parsePyLiteral(text: string, options: PyLiteralOptions = {}): PyLiteral | undefined {
  const p: Cursor = { s: text, i: 0, python: options.python === true };
  try {
    skipWs(p);
    const v = parseValue(p, 0);
    skipWs(p);
    if (p.s[p.i] === ',') {
      // a bare tuple: `1.0, 2.0` is a tuple expression for literal_eval
      const items: PyLiteral[] = [v];
      while (p.s[p.i] === ',') {
        p.i++;
        skipWs(p);
        if (p.i === p.s.length) break;
        items.push(parseValue(p, 0));
        skipWs(p);
      }
      if (p.i !== p.s.length) return undefined;
      return items;
    }
    if (p.i !== p.s.length) return undefined;
    return v;
  } catch (e) {
    if (e instanceof PySyntaxError) return undefined;
    throw e;
  }
}

interface Cursor {
  s: string;
  i: number;
  python: boolean;
}

const isComplex = (v: unknown): v is PyComplex =>
  typeof v === 'object' && v !== null && (v as PyComplex).kind === 'complex';
const isRealNumber = (v: unknown): v is number | bigint => typeof v === 'number' || typeof v === 'bigint';

function skipWs(p: Cursor): void {
  while (p.i < p.s.length) {
    const c = p.s.charCodeAt(p.i);
    if (c === 32 || c === 9 || c === 10 || c === 13 || c === 12) p.i++;
    else if (c === 35 && p.python) {
      // a comment: `1.#IND` is `1.` for literal_eval (its source is Python code)
      while (p.i < p.s.length && p.s[p.i] !== '\n') p.i++;
    } else break;
  }
}

const NUMBER_RE =
  /(?:0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+|(?:\d(?:_?\d)*)?\.?\d(?:_?\d)*(?:[eE][-+]?\d(?:_?\d)*)?\.?|\d(?:_?\d)*\.)[jJ]?/y;
const NAME_RE = /[A-Za-z_][A-Za-z0-9_]*/y;

function parseValue(p: Cursor, depth: number): PyLiteral {
  const v = parseOperand(p, depth);
  if (!p.python || !isRealNumber(v)) return v;
  // literal_eval's one binary operation: <real> + <complex> / <real> - <complex> (`1+2j`), right side unsigned
  const save = p.i;
  skipWs(p);
  const op = p.s[p.i];
  if (op !== '+' && op !== '-') {
    p.i = save;
    return v;
  }
  p.i++;
  skipWs(p);
  if (!/[0-9.]/.test(p.s[p.i] ?? '')) throw new PySyntaxError('binary operation');
  const right = parseNumber(p);
  if (!isComplex(right)) throw new PySyntaxError('binary operation on reals');
  const re = Number(v);
  return op === '+'
    ? { kind: 'complex', re: re + right.re, im: right.im }
    : { kind: 'complex', re: re - right.re, im: -right.im };
}

function parseOperand(p: Cursor, depth: number): PyLiteral {
  if (depth > 200) throw new PySyntaxError('too deep');
  skipWs(p);
  const c = p.s[p.i];
  if (c === undefined) throw new PySyntaxError('eof');
  if (c === '+' || c === '-') {
    // literal_eval allows one sign directly on a number literal (parentheses allowed): not `--5`, `-(-5)` or `-True`.
    p.i++;
    skipWs(p);
    let k = p.i;
    while (p.s[k] === '(' || p.s[k] === ' ' || p.s[k] === '\t') k++;
    if (p.s[k] === '+' || p.s[k] === '-') throw new PySyntaxError('nested unary');
    const v = parseOperand(p, depth + 1);
    if (isComplex(v)) return c === '-' ? { kind: 'complex', re: -v.re, im: -v.im } : v;
    if (typeof v === 'bigint') return c === '-' ? -v : v;
    if (typeof v !== 'number') throw new PySyntaxError('unary on non-number');
    return c === '-' ? -v : v;
  }
  if (c === '[') return parseSeq(p, ']', depth);
  if (c === '(') {
    p.i++;
    skipWs(p);
    if (p.s[p.i] === ')') {
      p.i++;
      return [];
    }
    const first = parseValue(p, depth + 1);
    skipWs(p);
    if (p.s[p.i] === ')') {
      p.i++;
      return first; // parenthesised expression, not a tuple
    }
    if (p.s[p.i] !== ',') throw new PySyntaxError('expected , or )');
    p.i++;
    const rest = parseSeqBody(p, ')', depth);
    return [first, ...rest];
  }
  if (c === '{') return parseBrace(p, depth);
  if (c === '"' || c === "'") return parseStringConcat(p, '');
  if (/[0-9.]/.test(c)) return parseNumber(p);
  NAME_RE.lastIndex = p.i;
  const m = NAME_RE.exec(p.s);
  if (m) {
    const name = m[0];
    const next = p.s[p.i + name.length];
    if ((next === '"' || next === "'") && /^(?:[rRuUbB]|[rR][bB]|[bB][rR])$/.test(name)) {
      p.i += name.length;
      return parseStringConcat(p, name.toLowerCase());
    }
    p.i += name.length;
    if (name === 'True') return true;
    if (name === 'False') return false;
    if (name === 'None') return null;
    throw new PySyntaxError(`name ${name}`);
  }
  throw new PySyntaxError(`unexpected ${c}`);
}

function parseNumber(p: Cursor): number | bigint | PyComplex {
  NUMBER_RE.lastIndex = p.i;
  const m = NUMBER_RE.exec(p.s);
  if (!m || m[0] === '.') throw new PySyntaxError('bad number');
  const t = m[0];
  if (/[jJ]$/.test(t)) {
    if (!p.python) throw new PySyntaxError('complex');
    p.i += t.length;
    return { kind: 'complex', re: 0, im: Number(t.slice(0, -1).replace(/_/g, '')) };
  }
  p.i += t.length;
  const clean = t.replace(/_/g, '');
  const integer = /^(?:0[xXoObB][0-9a-fA-F]+|\d+)$/.test(clean);
  // Python rejects leading zeros in non-zero decimal integers ("012").
  if (/^0\d+$/.test(clean) && /[1-9]/.test(clean)) throw new PySyntaxError('leading zero');
  if (p.python && integer) {
    // CPython 3.11 refuses decimal int literals over 4,300 digits (sys.int_info.str_digits_check_threshold)
    if (/^\d+$/.test(clean) && clean.length > 4300) throw new PySyntaxError('int digits limit');
    const big = BigInt(clean);
    return big <= 9007199254740992n ? Number(big) : big;
  }
  if (/^0[xXoObB]/.test(clean)) return Number(clean);
  return Number(clean);
}

function parseSeq(p: Cursor, close: string, depth: number): PyLiteral[] {
  p.i++; // opening bracket
  return parseSeqBody(p, close, depth);
}

function parseSeqBody(p: Cursor, close: string, depth: number): PyLiteral[] {
  const out: PyLiteral[] = [];
  for (;;) {
    skipWs(p);
    if (p.s[p.i] === close) {
      p.i++;
      return out;
    }
    out.push(parseValue(p, depth + 1));
    skipWs(p);
    const c = p.s[p.i];
    if (c === ',') {
      p.i++;
      continue;
    }
    if (c === close) {
      p.i++;
      return out;
    }
    throw new PySyntaxError(`expected , or ${close}`);
  }
}

function parseBrace(p: Cursor, depth: number): PyLiteral {
  p.i++;
  skipWs(p);
  if (p.s[p.i] === '}') {
    p.i++;
    return { kind: 'dict', entries: [] };
  }
  const first = parseValue(p, depth + 1);
  skipWs(p);
  if (p.s[p.i] !== ':') {
    // a set
    if (p.s[p.i] === '}') {
      p.i++;
      if (Array.isArray(first) || isDict(first)) throw new PySyntaxError('unhashable in set');
      return [first];
    }
    if (p.s[p.i] !== ',') throw new PySyntaxError('expected , or }');
    p.i++;
    const rest = parseSeqBody(p, '}', depth);
    const all = [first, ...rest];
    for (const v of all) if (Array.isArray(v) || isDict(v)) throw new PySyntaxError('unhashable in set');
    return p.python ? pythonSet(all) : all;
  }
  const entries: Array<[string, PyLiteral]> = [];
  let key = first;
  for (;;) {
    if (Array.isArray(key) || isDict(key)) throw new PySyntaxError('unhashable key');
    p.i++; // ':'
    const value = parseValue(p, depth + 1);
    const k = String(key);
    const at = entries.findIndex((e) => e[0] === k);
    if (at >= 0) entries[at] = [k, value];
    else entries.push([k, value]);
    skipWs(p);
    const c = p.s[p.i];
    if (c === '}') {
      p.i++;
      return { kind: 'dict', entries };
    }
    if (c !== ',') throw new PySyntaxError('expected , or }');
    p.i++;
    skipWs(p);
    if (p.s[p.i] === '}') {
      p.i++;
      return { kind: 'dict', entries };
    }
    key = parseValue(p, depth + 1);
    skipWs(p);
    if (p.s[p.i] !== ':') throw new PySyntaxError('expected :');
  }
}

/**
 * `set(values)` as CPython builds it: numbers (and bools, complex) deduplicated by numeric equality and ordered as
 * CPython iterates them; a set holding strings or None (whose hashes vary per process) keeps source order, equal
 * elements once.
 */
function pythonSet(values: PyLiteral[]): PyLiteral[] {
  const numeric = values.every(
    (v) => typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean' || isComplex(v),
  );
  if (numeric) return cpythonSetOrder(values, (v) => v as PyNumber);
  const out: PyLiteral[] = [];
  for (const v of values) {
    if (
      !out.some(
        (o) =>
          o === v ||
          (typeof o === 'number' && typeof v === 'boolean' && o === Number(v)) ||
          (typeof o === 'boolean' && typeof v === 'number' && Number(o) === v),
      )
    ) {
      out.push(v);
    }
  }
  return out;
}

/** Adjacent string literals concatenate in Python ("a" "b" == "ab"). */
function parseStringConcat(p: Cursor, prefix: string): string {
  let out = parseString(p, prefix);
  for (;;) {
    const save = p.i;
    skipWs(p);
    NAME_RE.lastIndex = p.i;
    const m = NAME_RE.exec(p.s);
    let pre = '';
    if (
      m &&
      /^(?:[rRuUbB]|[rR][bB]|[bB][rR])$/.test(m[0]) &&
      (p.s[p.i + m[0].length] === '"' || p.s[p.i + m[0].length] === "'")
    ) {
      pre = m[0].toLowerCase();
      p.i += m[0].length;
    }
    const c = p.s[p.i];
    if (c === '"' || c === "'") out += parseString(p, pre);
    else {
      p.i = save;
      return out;
    }
  }
}

function parseString(p: Cursor, prefix: string): string {
  const raw = prefix.includes('r');
  const q = p.s[p.i]!;
  const triple = p.s.startsWith(q.repeat(3), p.i);
  const close = triple ? q.repeat(3) : q;
  p.i += close.length;
  let out = '';
  for (;;) {
    if (p.i >= p.s.length) throw new PySyntaxError('unterminated string');
    if (p.s.startsWith(close, p.i)) {
      p.i += close.length;
      return out;
    }
    const c = p.s[p.i]!;
    if (!triple && c === '\n') throw new PySyntaxError('newline in string');
    if (c === '\\') {
      const n = p.s[p.i + 1];
      if (n === undefined) throw new PySyntaxError('dangling backslash');
      if (raw) {
        out += c + n;
        p.i += 2;
        continue;
      }
      p.i += 2;
      switch (n) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case '\\':
          out += '\\';
          break;
        case "'":
          out += "'";
          break;
        case '"':
          out += '"';
          break;
        case '\n':
          break;
        case '0':
          out += '\0';
          break;
        case 'x': {
          const h = p.s.slice(p.i, p.i + 2);
          if (!/^[0-9a-fA-F]{2}$/.test(h)) throw new PySyntaxError('bad \\x');
          out += String.fromCharCode(parseInt(h, 16));
          p.i += 2;
          break;
        }
        case 'u': {
          const h = p.s.slice(p.i, p.i + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(h)) throw new PySyntaxError('bad \\u');
          out += String.fromCharCode(parseInt(h, 16));
          p.i += 4;
          break;
        }
        default:
          out += '\\' + n;
      }
      continue;
    }
    out += c;
    p.i++;
  }
}

/**
 * Whether a parsed literal is a dict.
 * @param v any parsed literal.
 * @returns true for `{...: ...}` literals.
 */
export function isDict(v: unknown): v is PyDict {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    (v as PyDict).kind === 'dict' &&
    Array.isArray((v as PyDict).entries)
  );
}
