/**
 * The schema of a migrated run store in one engine-neutral shape (issue 41), to compare the engines and a store's
 * schema before and after a change: per table its columns (name, type mapped to SQLite's storage names, nullability,
 * default), primary key and indexes (name, columns, unique, partial). SQLite: `pragma_table_info`,
 * `pragma_index_list` / `pragma_index_info`; PostgreSQL: `information_schema.columns`, `pg_index`.
 * PostgreSQL's `rid` (SQLite's implicit rowid) is reported apart (`rid`), not as a column.
 */
import type Database from 'better-sqlite3';
import type pg from 'pg';

export interface ColumnShape {
  name: string;
  type: string;
  nullable: boolean;
  default: string | null;
}
export interface IndexShape {
  name: string;
  columns: string[];
  unique: boolean;
  partial: boolean;
}
export interface TableShape {
  columns: ColumnShape[];
  primaryKey: string[];
  indexes: IndexShape[];
  rid: boolean;
}
export type SchemaShape = Record<string, TableShape>;

/** PostgreSQL's type names as SQLite's declared types of the same columns (`migrations.ts`' SchemaKit). */
const PG_TYPES: Record<string, string> = {
  text: 'TEXT',
  integer: 'INTEGER',
  bigint: 'INTEGER',
  'double precision': 'REAL',
  bytea: 'BLOB',
};

/** A default's text without PostgreSQL's casts (`'unknown'::text` → `'unknown'`). */
const normDefault = (d: string | null) => (d === null ? null : d.replace(/::[a-z ]+$/i, ''));

/** The schema of a SQLite store (tables other than SQLite's own). */
export function sqliteSchema(db: Database.Database): SchemaShape {
  const out: SchemaShape = {};
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .all() as { name: string }[];
  for (const { name } of tables) {
    const cols = db
      .prepare('SELECT name, type, "notnull" AS nn, dflt_value AS d, pk FROM pragma_table_info(?) ORDER BY cid')
      .all(name) as { name: string; type: string; nn: number; d: string | null; pk: number }[];
    const indexes = (
      db
        .prepare('SELECT name, "unique" AS u, partial FROM pragma_index_list(?) WHERE origin = \'c\' ORDER BY name')
        .all(name) as { name: string; u: number; partial: number }[]
    ).map((i) => ({
      name: i.name,
      unique: i.u === 1,
      partial: i.partial === 1,
      columns: (
        db.prepare('SELECT name FROM pragma_index_info(?) ORDER BY seqno').all(i.name) as { name: string }[]
      ).map((c) => c.name),
    }));
    out[name] = {
      // a SQLite primary-key column other than INTEGER PRIMARY KEY accepts NULL (a legacy quirk); Loupe never writes one
      columns: cols.map((c) => ({
        name: c.name,
        type: c.type.toUpperCase(),
        nullable: c.nn === 0 && c.pk === 0,
        default: c.d,
      })),
      primaryKey: cols
        .filter((c) => c.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((c) => c.name),
      indexes,
      rid: false,
    };
  }
  return out;
}

/** The schema of a PostgreSQL store (base tables of schema `public`). */
export async function pgSchema(q: pg.Pool | pg.Client): Promise<SchemaShape> {
  const out: SchemaShape = {};
  const tables = (
    await q.query(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1",
    )
  ).rows as { name: string }[];
  for (const { name } of tables) {
    const cols = (
      await q.query(
        "SELECT column_name AS name, data_type AS type, is_nullable AS n, column_default AS d FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position",
        [name],
      )
    ).rows as { name: string; type: string; n: string; d: string | null }[];
    const idx = (
      await q.query(
        `SELECT c.relname AS name, i.indisunique AS u, i.indisprimary AS p, i.indpred IS NOT NULL AS partial,
        ARRAY(SELECT a.attname FROM unnest(i.indkey) WITH ORDINALITY k(n, o) JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n ORDER BY k.o)::text[] AS columns
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = ('public.' || quote_ident($1))::regclass ORDER BY c.relname`,
        [name],
      )
    ).rows as { name: string; u: boolean; p: boolean; partial: boolean; columns: string[] }[];
    const pk = idx.find((i) => i.p);
    out[name] = {
      columns: cols
        .filter((c) => c.name !== 'rid')
        .map((c) => ({
          name: c.name,
          type: PG_TYPES[c.type] ?? c.type,
          nullable: c.n === 'YES',
          default: normDefault(c.d),
        })),
      primaryKey: pk && !(pk.columns.length === 1 && pk.columns[0] === 'rid') ? pk.columns : [],
      indexes: idx
        .filter((i) => !i.p && !(i.u && i.name.endsWith('_key')))
        .map((i) => ({ name: i.name, columns: i.columns, unique: i.u, partial: i.partial })),
      rid: cols.some((c) => c.name === 'rid'),
    };
  }
  return out;
}
