/**
 * A small reader for Python literals, the subset `ast.literal_eval` accepts that benchmark answers use:
 * numbers (int, float, exponent, underscores, hex/octal/binary), strings (single, double, triple
 * quotes; r/b/u prefixes), `True`/`False`/`None`, lists, tuples, sets and dicts, unary `+`/`-`.
 * Complex numbers are rejected (LongTA never produces them; `literal_eval` would return a complex
 * that its normaliser then drops).
 */

/** A Python literal value: tuples and sets become arrays, dicts become `PyDict` (keys in order). */
export type PyLiteral = number | string | boolean | null | PyLiteral[] | PyDict;
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
export function parsePyLiteral(text: string): PyLiteral | undefined {
  const p = { s: text, i: 0 };
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
}

function skipWs(p: Cursor): void {
  while (p.i < p.s.length) {
    const c = p.s.charCodeAt(p.i);
    if (c === 32 || c === 9 || c === 10 || c === 13 || c === 12) p.i++;
    else break;
  }
}

const NUMBER_RE = /(?:0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+|(?:\d(?:_?\d)*)?\.?\d(?:_?\d)*(?:[eE][-+]?\d(?:_?\d)*)?\.?|\d(?:_?\d)*\.)[jJ]?/y;
const NAME_RE = /[A-Za-z_][A-Za-z0-9_]*/y;

function parseValue(p: Cursor, depth: number): PyLiteral {
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
    const v = parseValue(p, depth + 1);
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

function parseNumber(p: Cursor): number {
  NUMBER_RE.lastIndex = p.i;
  const m = NUMBER_RE.exec(p.s);
  if (!m || m[0] === '.') throw new PySyntaxError('bad number');
  const t = m[0];
  if (/[jJ]$/.test(t)) throw new PySyntaxError('complex');
  p.i += t.length;
  const clean = t.replace(/_/g, '');
  if (/^0[xXoObB]/.test(clean)) return Number(clean);
  // Python rejects leading zeros in non-zero decimal integers ("012").
  if (/^0\d+$/.test(clean) && /[1-9]/.test(clean)) throw new PySyntaxError('leading zero');
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
      return [first];
    }
    if (p.s[p.i] !== ',') throw new PySyntaxError('expected , or }');
    p.i++;
    const rest = parseSeqBody(p, '}', depth);
    const all = [first, ...rest];
    for (const v of all) if (Array.isArray(v) || isDict(v)) throw new PySyntaxError('unhashable in set');
    return all;
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

/** Adjacent string literals concatenate in Python ("a" "b" == "ab"). */
function parseStringConcat(p: Cursor, prefix: string): string {
  let out = parseString(p, prefix);
  for (;;) {
    const save = p.i;
    skipWs(p);
    NAME_RE.lastIndex = p.i;
    const m = NAME_RE.exec(p.s);
    let pre = '';
    if (m && /^(?:[rRuUbB]|[rR][bB]|[bB][rR])$/.test(m[0]) && (p.s[p.i + m[0].length] === '"' || p.s[p.i + m[0].length] === "'")) {
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
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case '\\': out += '\\'; break;
        case "'": out += "'"; break;
        case '"': out += '"'; break;
        case '\n': break;
        case '0': out += '\0'; break;
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
        default: out += '\\' + n;
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
  return typeof v === 'object' && v !== null && !Array.isArray(v) && (v as PyDict).kind === 'dict' && Array.isArray((v as PyDict).entries);
}
