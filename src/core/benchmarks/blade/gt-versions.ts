/**
 * BLADE ground truth, versioned (issue 17): a dataset's `annotations.csv` as immutable versions in the run store.
 * Version 0 is the shipped file, read as it is; versions 1, 2, … are full CSV texts in BLADE's own format (same
 * columns, same JSON shapes), each with its content hash, author, time, parent and note — the same versioning as
 * expert checklists. A version exports byte for byte to `annotations.csv`; every BLADE score records the version it
 * used. Source: issue 17; BLADE `annotations.csv` format (spec §1.2.3; `blade_bench/data/annotation.py`).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Selectable } from 'kysely';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import type { GroundTruthUsed } from '../../eval/run-score.ts';
import type { BladeGtVersionsTable } from '../../store/schema.ts';
import type { StoreSql } from '../../store/sql.ts';
import { storeSqlOf } from '../../store/store-sql.ts';
import type { RunStore } from '../../store/types.ts';
import type { BladeAnnotations } from './items.ts';
import { LoupeInputError } from '../../util/errors.ts';
import { parseBladeAnnotations } from './annotations.ts';

/** One stored version of a dataset's ground truth. */
export interface BladeGtVersion {
  dataset: string;
  /** 1, 2, … (0 is the shipped file and is never stored). */
  version: number;
  /** The version it was edited from (0 = the shipped file). */
  parent: number;
  /** sha256 (hex) of the CSV text with `\r\n` read as `\n`. */
  hash: string;
  /** The whole `annotations.csv` text. */
  csv: string;
  author: string;
  createdAt: string;
  note: string;
}

/** The choice of ground truth for scoring: the newest version (default), the shipped file, or a version number. */
export type GtChoice = 'latest' | 'shipped' | number;

/**
 * Content hash of a ground-truth CSV (line endings normalised). @returns 64 hex.
 */
export function gtHash(csv: string): string {
  return createHash('sha256').update(csv.replace(/\r\n/g, '\n')).digest('hex');
}

/**
 * Parses a ground-truth CSV text as the scorer does ({@link parseBladeAnnotations}).
 * @param name how rows are named in problems (`affairs/annotations.csv@v2`).
 * @returns the specs and the problems of rows that could not be used (row and column named).
 * @throws LoupeInputError when the text has no `spec_id` column or no BLADE spec column.
 */
export function parseGtCsv(csv: string, name: string): { annotations: BladeAnnotations; problems: string[] } {
  return parseBladeAnnotations(name, csv);
}

/**
 * Edits a ground-truth CSV as rows of named cells, keeping its header order and every column (`Unnamed: n` too);
 * new columns a row names are appended to the header.
 * @param edit changes `rows` in place (push, splice, set cells). @returns the new CSV text.
 */
export function editGtCsv(csv: string, edit: (rows: Array<Record<string, string>>, columns: string[]) => void): string {
  const records = parse(csv, { bom: true, relax_column_count: true, skip_empty_lines: false }) as string[][];
  const header = records[0] ?? [];
  const rows = records
    .slice(1)
    .filter((r) => r.length > 1 || (r[0] ?? '') !== '')
    .map((r) => Object.fromEntries(header.map((h, i) => [h, r[i] ?? ''])));
  const columns = [...header];
  edit(rows, columns);
  for (const r of rows) for (const k of Object.keys(r)) if (!columns.includes(k)) columns.push(k);
  return stringify([columns, ...rows.map((r) => columns.map((c) => r[c] ?? ''))]);
}

/** Spec-level difference between two versions: ids added, removed, changed, per kind. */
export interface GtDiff {
  added: string[];
  removed: string[];
  changed: string[];
}

/**
 * What changed between two ground truths, spec by spec (`transform:<id>`, `cvar:<id>`, `model:<id>`), comparing the
 * parsed specs (a change of CSV quoting alone is no change).
 */
export function diffGroundTruth(a: BladeAnnotations, b: BladeAnnotations): GtDiff {
  const index = (x: BladeAnnotations) =>
    new Map<string, string>([
      ...x.conceptualVars.map((s) => [`cvar:${s.specId}`, JSON.stringify(s)] as [string, string]),
      ...x.transforms.map((s) => [`transform:${s.specId}`, JSON.stringify(s)] as [string, string]),
      ...x.models.map((s) => [`model:${s.specId}`, JSON.stringify(s)] as [string, string]),
    ]);
  const ia = index(a);
  const ib = index(b);
  return {
    added: [...ib.keys()].filter((k) => !ia.has(k)).sort(),
    removed: [...ia.keys()].filter((k) => !ib.has(k)).sort(),
    changed: [...ib.keys()].filter((k) => ia.has(k) && ia.get(k) !== ib.get(k)).sort(),
  };
}

/** The ground-truth versions kept with a run store. */
export interface BladeGtStore {
  /** Stored versions of a dataset, oldest first (version 0, the shipped file, is not among them). */
  versions(dataset: string): Promise<BladeGtVersion[]>;
  get(dataset: string, version: number): Promise<BladeGtVersion | undefined>;
  latest(dataset: string): Promise<BladeGtVersion | undefined>;
  /**
   * Saves a new version (the next number). A text equal (by hash) to its parent saves nothing and returns the parent.
   * @throws LoupeInputError when the text does not parse as BLADE ground truth, or a row of it cannot be used
   *   (each problem named), or the parent does not exist.
   */
  save(v: {
    dataset: string;
    csv: string;
    author: string;
    note?: string;
    parent: number;
    shippedCsv: string;
  }): Promise<BladeGtVersion>;
}

const fromRow = (r: Selectable<BladeGtVersionsTable>): BladeGtVersion => ({
  dataset: r.dataset,
  version: r.version,
  parent: r.parent,
  hash: r.hash,
  csv: r.csv,
  author: r.author,
  createdAt: r.created_at,
  note: r.note,
});

/**
 * The ground-truth store of a run store of either engine (table `blade_gt_versions`, migration 8; queries through
 * `StoreSql`); a save holds its dataset's lock (`StoreSql.tx`), so two saves of one dataset number their versions in turn.
 */
export class StoreBladeGtStore implements BladeGtStore {
  readonly #s: StoreSql;
  /** @param s the run store's queries (`storeSqlOf`); callers use {@link bladeGtStoreOf}. */
  constructor(s: StoreSql) {
    this.#s = s;
  }

  #of(dataset: string) {
    return this.#s.db.selectFrom('blade_gt_versions').selectAll().where('dataset', '=', dataset);
  }

  async versions(dataset: string): Promise<BladeGtVersion[]> {
    return (await this.#s.all(this.#of(dataset).orderBy('version'))).map(fromRow);
  }

  async get(dataset: string, version: number): Promise<BladeGtVersion | undefined> {
    const r = await this.#s.first(this.#of(dataset).where('version', '=', version));
    return r ? fromRow(r) : undefined;
  }

  async latest(dataset: string): Promise<BladeGtVersion | undefined> {
    const r = await this.#s.first(this.#of(dataset).orderBy('version', 'desc').limit(1));
    return r ? fromRow(r) : undefined;
  }

  async save(v: {
    dataset: string;
    csv: string;
    author: string;
    note?: string;
    parent: number;
    shippedCsv: string;
  }): Promise<BladeGtVersion> {
    const plan = await planGtSave(v, (d, n) => this.get(d, n));
    if ('existing' in plan) return plan.existing;
    return this.#s.tx(`blade-gt|${v.dataset}`, async (t) => {
      const last = await t.first(
        t.db
          .selectFrom('blade_gt_versions')
          .select((eb) => eb.fn.max('version').as('m'))
          .where('dataset', '=', v.dataset),
      );
      const row: BladeGtVersion = {
        ...plan.row,
        version: Number(last?.m ?? 0) + 1,
        createdAt: new Date().toISOString(),
      };
      await t.run(
        t.db.insertInto('blade_gt_versions').values({
          dataset: row.dataset,
          version: row.version,
          parent: row.parent,
          hash: row.hash,
          csv: row.csv,
          author: row.author,
          created_at: row.createdAt,
          note: row.note,
        }),
      );
      return row;
    });
  }
}

/**
 * Checks a new ground-truth version (either engine, before its transaction): the text parses as BLADE ground truth,
 * it has an author, its parent exists; a text equal to its parent is that parent.
 * @returns the existing version to return, or the row to insert (without number and time).
 * @throws LoupeInputError naming each row problem, a missing author or parent.
 */
async function planGtSave(
  v: { dataset: string; csv: string; author: string; note?: string; parent: number; shippedCsv: string },
  get: (dataset: string, version: number) => Promise<BladeGtVersion | undefined>,
): Promise<{ existing: BladeGtVersion } | { row: Omit<BladeGtVersion, 'version' | 'createdAt'> }> {
  const name = `${v.dataset}/annotations.csv (new version)`;
  const { problems } = parseGtCsv(v.csv, name);
  if (problems.length) {
    throw new LoupeInputError(
      name,
      `${problems.length} row problem${problems.length === 1 ? '' : 's'}; nothing saved:\n  ${problems.slice(0, 10).join('\n  ')}`,
    );
  }
  if (!v.author.trim()) throw new LoupeInputError(name, 'a version needs an author');
  const parentCsv = v.parent === 0 ? v.shippedCsv : (await get(v.dataset, v.parent))?.csv;
  if (parentCsv === undefined) {
    throw new LoupeInputError(`ground-truth version ${v.parent}`, `dataset ${v.dataset} has no such version`);
  }
  const hash = gtHash(v.csv);
  if (hash === gtHash(parentCsv)) {
    if (v.parent === 0) {
      return {
        existing: {
          dataset: v.dataset,
          version: 0,
          parent: 0,
          hash,
          csv: parentCsv,
          author: 'BLADE',
          createdAt: '',
          note: 'shipped annotations.csv',
        },
      };
    }
    return { existing: (await get(v.dataset, v.parent))! };
  }
  return {
    row: {
      dataset: v.dataset,
      parent: v.parent,
      hash,
      csv: v.csv,
      author: v.author.trim(),
      note: v.note?.trim() ?? '',
    },
  };
}

/**
 * The ground-truth store kept with a run store (same database and engine).
 * @throws Error naming the engine when it has none.
 */
export function bladeGtStoreOf(store: RunStore): BladeGtStore {
  return new StoreBladeGtStore(storeSqlOf(store, 'BLADE ground-truth versions'));
}

/**
 * The ground truth to score a dataset against: the newest stored version (`latest`, default; the shipped file when
 * none), the shipped file, or version N.
 * @param shippedFile the dataset's `annotations.csv`; `shipped` its parsed specs (the loader's).
 * @returns the specs and what was used.
 * @throws LoupeInputError (subject `ground-truth version N`) when that version does not exist.
 */
export async function groundTruthFor(
  store: RunStore,
  dataset: string,
  shippedFile: string,
  shipped: BladeAnnotations,
  choice: GtChoice = 'latest',
): Promise<{ annotations: BladeAnnotations; used: GroundTruthUsed }> {
  const gts = choice === 'shipped' || choice === 0 ? undefined : bladeGtStoreOf(store);
  const v = gts
    ? choice === 'latest'
      ? await gts.latest(dataset)
      : await gts.get(dataset, choice as number)
    : undefined;
  if (typeof choice === 'number' && choice !== 0 && !v) {
    const have = gts ? (await gts.versions(dataset)).map((x) => x.version) : [];
    throw new LoupeInputError(
      `ground-truth version ${choice}`,
      `dataset ${dataset} has ${have.length ? `versions 0 (shipped), ${have.join(', ')}` : 'only version 0 (the shipped file)'}`,
    );
  }
  const count = (a: BladeAnnotations) => ({
    conceptualVars: a.conceptualVars.length,
    transforms: a.transforms.length,
    models: a.models.length,
  });
  if (v) {
    const { annotations } = parseGtCsv(v.csv, `${dataset}/annotations.csv@v${v.version}`);
    return { annotations, used: { source: 'authored', version: v.version, hash: v.hash, specs: count(annotations) } };
  }
  let hash: string;
  try {
    hash = gtHash(readFileSync(shippedFile, 'utf8'));
  } catch {
    hash = 'unreadable';
  }
  return { annotations: shipped, used: { source: 'shipped', version: 0, hash, specs: count(shipped) } };
}

/**
 * Parses a `--gt-version` / setting value: `latest`, `shipped` (or 0), or a version number.
 * @throws LoupeInputError naming the value otherwise.
 */
export function parseGtChoice(v: string, what = 'ground-truth version'): GtChoice {
  if (v === 'latest' || v === 'shipped') return v;
  if (/^\d+$/.test(v)) return Number(v) === 0 ? 'shipped' : Number(v);
  throw new LoupeInputError(what, `must be latest, shipped (0) or a version number, got '${v}'`);
}
