/**
 * Lossless text on PostgreSQL: PostgreSQL's `text` refuses the NUL character (U+0000: the wire protocol fails with
 * "invalid message format" / "invalid byte sequence for encoding UTF8: 0x00") and its `json`/`jsonb` refuse the JSON
 * escape `\u0000` ("unsupported Unicode escape sequence" on `->>`). An agent's tool arguments, observations, answers
 * and notes may hold either, so every string the PostgreSQL stores send is escaped here, and every text value they
 * read is unescaped here — in ONE place: the connection class and type parsers of the run store's pool
 * ({@link LosslessClient}, {@link losslessTypes}), which the annotation, checklist and ground-truth stores and
 * `loupe store copy` share, plus {@link encodePgText} for the literals of the simple queries that `commitStep` inlines.
 *
 * The escape: `U+E000` (a private-use character) starts a two-character sequence —
 *   NUL → `U+E000 U+E001`; the six characters `\u0000` (a JSON escape: preceded by an even number of backslashes)
 *   → `U+E000 U+E002`; `U+E000` itself → `U+E000 U+E003`. Everything else is kept.
 * It is a bijection (decode ∘ encode = identity for every string), and every `U+E000` of a stored value starts an
 * escape, so equality, `ANY(...)`, `strpos` and `LIKE 'prefix%'` on escaped parameters against escaped columns give
 * the same answers as on the plain texts; `->>` on an escaped JSON column yields `U+E000 U+E002` where the string held
 * NUL (see {@link jsonNulToText}). Rows written before this escape existed read back unchanged unless they hold
 * `U+E000` followed by `U+E001`–`U+E003`.
 * Source: issue 39 item 2 "Text with NULs stored losslessly on PostgreSQL".
 */
import pg from 'pg';

/** The escape character (private use area). */
export const PG_ESC = '\uE000';
/** Code after {@link PG_ESC}: a NUL character. */
const C_NUL = '\uE001';
/** Code after {@link PG_ESC}: the JSON escape `\u0000`. */
const C_JSON_NUL = '\uE002';
/** Code after {@link PG_ESC}: the escape character itself. */
const C_ESC = '\uE003';

const NEEDS = /\0|\uE000|\\u0000/;
// `\\` pairs are matched (and kept) first, so a `\u0000` after an escaped backslash (`\\u0000`: the text "\u0000") is kept.
const TOKENS = /\\\\|\\u0000|\0|\uE000/g;
const ESCAPED = /\uE000([\uE001-\uE003])/g;

/**
 * Escapes one string for PostgreSQL (see the module comment).
 * @param s any string. @returns a string without NUL and without the JSON escape `\u0000`; `s` itself when it holds
 *   neither (nor `U+E000`).
 */
export function encodePgText(s: string): string {
  if (!NEEDS.test(s)) return s;
  return s.replace(TOKENS, (t) =>
    t === '\\\\' ? t : t === '\0' ? PG_ESC + C_NUL : t === PG_ESC ? PG_ESC + C_ESC : PG_ESC + C_JSON_NUL,
  );
}

/**
 * Reverses {@link encodePgText}.
 * @param s a string read from PostgreSQL. @returns the original string (`s` itself when it holds no `U+E000`).
 */
export function decodePgText(s: string): string {
  if (!s.includes(PG_ESC)) return s;
  return s.replace(ESCAPED, (_, c: string) => (c === C_NUL ? '\0' : c === C_JSON_NUL ? '\\u0000' : PG_ESC));
}

/**
 * A query parameter as sent: strings escaped, arrays element by element (text[] parameters), plain objects as their
 * JSON text escaped (what `pg` would send for them); numbers, booleans, null, Dates and Buffers (bytea) unchanged.
 * @param v a parameter of `client.query`. @returns the value to send.
 */
export function encodePgParam(v: unknown): unknown {
  if (typeof v === 'string') return encodePgText(v);
  if (Array.isArray(v)) return v.map(encodePgParam);
  if (
    v &&
    typeof v === 'object' &&
    !(v instanceof Date) &&
    !Buffer.isBuffer(v) &&
    !ArrayBuffer.isView(v) &&
    typeof (v as { toPostgres?: unknown }).toPostgres !== 'function'
  ) {
    return encodePgText(JSON.stringify(v));
  }
  return v;
}

/**
 * SQL that turns `->>` output of an escaped JSON column into escaped text, exactly what {@link encodePgText} gives for
 * the JSON string's value: a NUL of the string is stored as the escaped JSON escape (`U+E000 U+E002`), which as text
 * means NUL (`U+E000 U+E001`); a string holding the six characters `\u0000` (stored in JSON as `\\u0000`) comes out
 * of `->>` as those six characters, which as escaped text are `U+E000 U+E002` (after an even number of backslashes,
 * as {@link encodePgText} decides). Exact, as every `U+E000` of an escaped value starts an escape. Without the second
 * step, a text filter or `= ANY(...)` with an escaped parameter misses such a string (issue 39).
 * @param expr an SQL expression of type text (e.g. `x::json ->> 'k'`). @returns an SQL expression of type text.
 */
export function jsonNulToText(expr: string): string {
  return jsonColumn(`replace(${expr}, '${PG_ESC}${C_JSON_NUL}', '${PG_ESC}${C_NUL}')`);
}

/**
 * SQL that makes a JSON text column safe to cast to `json` and use with `->>`: rows written before this escape may
 * hold the JSON escape `\u0000` (PostgreSQL's `->>` refuses it); it becomes the escaped form `U+E000 U+E002`. Escaped
 * backslashes (`\\`) are set aside first (as `U+E000 U+E004`, which no escaped value holds), so the text `\\u0000`
 * is kept. Rows written since hold no `\u0000` and pass unchanged.
 * @param col an SQL expression of type text holding JSON. @returns an SQL expression of type text.
 */
export function jsonColumn(col: string): string {
  return `replace(replace(replace(${col}, '\\\\', '${PG_ESC}\uE004'), '\\u0000', '${PG_ESC}${C_JSON_NUL}'), '${PG_ESC}\uE004', '\\\\')`;
}

/**
 * A JSON value escaped for a `json`/`jsonb` column that Loupe's pool does not write (pg-boss's job data, issue 39):
 * every string and key with {@link encodePgText}, done on its JSON text (the JSON escape `\u0000` of a NUL becomes
 * `U+E000 U+E002` inside its string, `U+E000` becomes `U+E000 U+E003`; the text is still valid JSON).
 * @param v a JSON-serialisable value (what `JSON.stringify` keeps). @returns a value of the same shape holding no NUL,
 *   to be sent as JSON; {@link decodePgJson} gives `v` back.
 */
export function encodePgJson<T>(v: T): T {
  return JSON.parse(encodePgText(JSON.stringify(v))) as T;
}

/**
 * Reverses {@link encodePgJson} on a value read back (parsed) from such a column.
 * @param v the parsed JSON value. @returns the value as sent to {@link encodePgJson}.
 */
export function decodePgJson<T>(v: T): T {
  if (v === undefined || v === null) return v;
  const text = JSON.stringify(v);
  return text.includes(PG_ESC) ? (JSON.parse(decodePgText(text)) as T) : v;
}

/** OIDs of text-like types (text, varchar, bpchar, json, jsonb) and of their arrays. */
const TEXT_OIDS = new Set([25, 1043, 1042, 114, 3802]);
const TEXT_ARRAY_OIDS = new Set([1009, 1015, 1014, 199, 3807]);

/**
 * Type parsers for a `pg` pool or client: BIGINT (int8) as JS numbers (counters and ids stay far below 2^53), every
 * text-like value and array of them unescaped with {@link decodePgText}; other types as `pg` parses them.
 */
export const losslessTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === 20) return (v: string) => Number(v);
    const base = pg.types.getTypeParser(oid, format as 'text') as (v: string) => unknown;
    if (TEXT_OIDS.has(oid)) return (v: string) => decodePgText(typeof v === 'string' ? v : String(v));
    if (TEXT_ARRAY_OIDS.has(oid)) {
      return (v: string) => (base(v) as Array<string | null>).map((x) => (typeof x === 'string' ? decodePgText(x) : x));
    }
    return base;
  }) as typeof pg.types.getTypeParser,
};

/**
 * The connection class of the run store's pool: every parameter of every query is escaped with {@link encodePgParam}
 * before `pg` sends it (`query(text, values)`, `query({ text, values })` and submittables with `values`). The SQL text
 * itself is sent as written (simple queries inline their literals through {@link encodePgText}).
 */
export class LosslessClient extends pg.Client {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the overloads of pg.Client.query, passed through
  override query(...args: any[]): any {
    const [config, values] = args;
    if (Array.isArray(values)) args[1] = values.map(encodePgParam);
    else if (config && typeof config === 'object' && Array.isArray((config as { values?: unknown }).values)) {
      const c = config as { values: unknown[] };
      // submittables (cursors) are objects with behaviour: escaped in place; plain configs are copied
      if (typeof (config as { submit?: unknown }).submit === 'function') c.values = c.values.map(encodePgParam);
      else args[0] = { ...c, values: c.values.map(encodePgParam) };
    }
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return (super.query as (...a: any[]) => any)(...args);
  }
}
