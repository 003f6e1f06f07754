/**
 * Experiments (issue 43): tags and names of runs, and saved run filters, kept in the run store (migration 19) and
 * written once for both engines through `StoreSql`. An experiment is a tag: the runs it holds are the runs carrying
 * it. Every change is a new row (tag, untag, name; a filter saved or removed), so what a colleague did on the team
 * store stays on record; a run's labels are what its rows say in insertion order.
 * Source: issue 43 "Experiments: tag or rename runs, saved filters, every view scoped to one experiment".
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { LoupeInputError } from '../util/errors.ts';
import type { StoreSql } from './sql.ts';
import { storeSqlOf } from './store-sql.ts';
import type { RunStore } from './types.ts';

/** The most characters a tag, a run name or a filter name may have. */
export const LABEL_MAX_CHARS = 80;

/** What a run is labelled with now. */
export interface RunLabels {
  /** The tags (experiments) the run carries, sorted. */
  tags: string[];
  /** The name given to the run, or null (listings show its profile and id). */
  name: string | null;
}

/** What a saved run filter keeps: every part given must hold (a conjunction). */
export interface RunFilterSpec {
  /** A built-in filter's id (see the app's built-in filters). */
  builtin?: string;
  /** Runs carrying this tag. */
  tag?: string;
  /** Runs of this benchmark kind. */
  suite?: string;
  /** Runs in this status. */
  status?: string;
  /** Runs whose name, model, agent or id contains this text (case-insensitive). */
  text?: string;
}

/** A saved filter as stored. */
export interface SavedFilter {
  name: string;
  spec: RunFilterSpec;
  author: string;
  createdAt: string;
}

/**
 * Checks and trims a tag, run name or filter name.
 * @param what names the thing in the error (`tag`, `run name`, `filter name`).
 * @returns the trimmed label.
 * @throws LoupeInputError when it is empty, longer than {@link LABEL_MAX_CHARS}, or holds a control character or a
 *   line break (a label is shown on one line of every listing).
 */
export function checkLabel(value: string, what: string): string {
  const v = (value ?? '').trim();
  if (!v) throw new LoupeInputError(what, 'is empty');
  if ([...v].length > LABEL_MAX_CHARS) throw new LoupeInputError(what, `is longer than ${LABEL_MAX_CHARS} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u.test(v)) {
    throw new LoupeInputError(what, 'holds a control or direction character');
  }
  return v;
}

const SPEC_KEYS = ['builtin', 'tag', 'suite', 'status', 'text'] as const;

/**
 * Checks a saved filter's spec (what a colleague stored is read back through this too).
 * @returns the spec with only its known, non-empty string parts.
 * @throws LoupeInputError naming `subject` when it is not an object, a part is not a string, or nothing is set.
 */
export function checkFilterSpec(spec: unknown, subject: string): RunFilterSpec {
  if (!spec || typeof spec !== 'object' || Array.isArray(spec)) {
    throw new LoupeInputError(subject, 'is not a filter (an object with builtin, tag, suite, status or text)');
  }
  const out: RunFilterSpec = {};
  for (const k of SPEC_KEYS) {
    const v = (spec as Record<string, unknown>)[k];
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string') throw new LoupeInputError(subject, `${k} must be text`);
    out[k] = k === 'text' ? v.slice(0, 200) : checkLabel(v, `${subject} ${k}`);
  }
  if (!Object.keys(out).length) throw new LoupeInputError(subject, 'sets nothing to filter on');
  return out;
}

/** The experiments (tags, names, saved filters) of one run store. */
export class ExperimentStore {
  readonly #s: StoreSql;
  /** @param s the run store's queries (`storeSqlOf`); callers use {@link experimentStoreOf}. */
  constructor(s: StoreSql) {
    this.#s = s;
  }

  async #add(runId: string, kind: 'tag' | 'untag' | 'name', value: string, author: string): Promise<void> {
    await this.#s.run(
      this.#s.db.insertInto('run_labels').values({
        id: randomUUID(),
        run_id: runId,
        kind,
        value,
        author: checkLabel(author, 'author'),
        created_at: new Date().toISOString(),
      }),
    );
  }

  /**
   * Tags a run (a no-op row is not written when it already carries the tag).
   * @throws LoupeInputError for a bad tag or author.
   */
  async tag(runId: string, tag: string, author: string): Promise<void> {
    const t = checkLabel(tag, 'tag');
    if ((await this.labelsOf([runId])).get(runId)?.tags.includes(t)) return;
    await this.#add(runId, 'tag', t, author);
  }

  /** Removes a tag from a run (nothing written when it does not carry it). @throws LoupeInputError for a bad tag. */
  async untag(runId: string, tag: string, author: string): Promise<void> {
    const t = checkLabel(tag, 'tag');
    if (!(await this.labelsOf([runId])).get(runId)?.tags.includes(t)) return;
    await this.#add(runId, 'untag', t, author);
  }

  /**
   * Names a run; an empty `name` clears the name (listings go back to its profile).
   * @throws LoupeInputError for a bad name or author.
   */
  async rename(runId: string, name: string, author: string): Promise<void> {
    await this.#add(runId, 'name', name.trim() === '' ? '' : checkLabel(name, 'run name'), author);
  }

  /**
   * The current tags and name of runs, replaying their rows in insertion order.
   * @param runIds the runs, or undefined for every labelled run.
   * @returns run id → labels (runs without rows are absent).
   */
  async labelsOf(runIds?: readonly string[]): Promise<Map<string, RunLabels>> {
    if (runIds && !runIds.length) return new Map();
    let q = this.#s.db.selectFrom('run_labels').select(['run_id', 'kind', 'value']);
    if (runIds) q = q.where('run_id', 'in', [...runIds]);
    const rows = await this.#s.all(q.orderBy(sql.ref(this.#s.rowid)));
    const state = new Map<string, { tags: Set<string>; name: string | null }>();
    for (const r of rows) {
      let s = state.get(r.run_id);
      if (!s) state.set(r.run_id, (s = { tags: new Set(), name: null }));
      if (r.kind === 'tag') s.tags.add(r.value);
      else if (r.kind === 'untag') s.tags.delete(r.value);
      else if (r.kind === 'name') s.name = r.value || null;
    }
    return new Map([...state].map(([id, s]) => [id, { tags: [...s.tags].sort(), name: s.name }]));
  }

  /** Every experiment (a tag some run carries now) with its number of runs, by name. */
  async experiments(): Promise<Array<{ tag: string; runs: number }>> {
    const counts = new Map<string, number>();
    for (const l of (await this.labelsOf()).values()) for (const t of l.tags) counts.set(t, (counts.get(t) ?? 0) + 1);
    return [...counts].sort((a, b) => a[0].localeCompare(b[0])).map(([tag, runs]) => ({ tag, runs }));
  }

  /** The runs carrying a tag now (including runs since deleted: callers intersect with the runs they list). */
  async runsTagged(tag: string): Promise<Set<string>> {
    const ids = (
      await this.#s.all(
        this.#s.db
          .selectFrom('run_labels')
          .select('run_id')
          .distinct()
          .where('value', '=', tag)
          .where('kind', 'in', ['tag', 'untag']),
      )
    ).map((r) => r.run_id);
    const labels = await this.labelsOf(ids);
    return new Set(ids.filter((id) => labels.get(id)?.tags.includes(tag)));
  }

  /**
   * Saves (or replaces) a filter under a name.
   * @throws LoupeInputError for a bad name, author or spec.
   */
  async saveFilter(name: string, spec: RunFilterSpec, author: string): Promise<SavedFilter> {
    const n = checkLabel(name, 'filter name');
    const s = checkFilterSpec(spec, `filter ${n}`);
    const row = {
      id: randomUUID(),
      name: n,
      spec: JSON.stringify(s),
      author: checkLabel(author, 'author'),
      created_at: new Date().toISOString(),
    };
    await this.#s.run(this.#s.db.insertInto('saved_filters').values(row));
    return { name: n, spec: s, author: row.author, createdAt: row.created_at };
  }

  /** Removes a saved filter (a row saying so). @returns false when no filter has that name. */
  async removeFilter(name: string, author: string): Promise<boolean> {
    const n = checkLabel(name, 'filter name');
    if (!(await this.filters()).some((f) => f.name === n)) return false;
    await this.#s.run(
      this.#s.db.insertInto('saved_filters').values({
        id: randomUUID(),
        name: n,
        spec: '',
        author: checkLabel(author, 'author'),
        created_at: new Date().toISOString(),
      }),
    );
    return true;
  }

  /**
   * The saved filters now (the newest row of each name; removed ones left out), by name. A row whose spec does not
   * parse (a colleague's tool wrote it) is left out rather than failing every listing.
   */
  async filters(): Promise<SavedFilter[]> {
    const rows = await this.#s.all(this.#s.db.selectFrom('saved_filters').selectAll().orderBy(sql.ref(this.#s.rowid)));
    const latest = new Map<string, (typeof rows)[number]>();
    for (const r of rows) latest.set(r.name, r);
    const out: SavedFilter[] = [];
    for (const r of latest.values()) {
      if (!r.spec) continue;
      try {
        out.push({
          name: r.name,
          spec: checkFilterSpec(JSON.parse(r.spec), `filter ${r.name}`),
          author: r.author,
          createdAt: r.created_at,
        });
      } catch {
        // unreadable spec: skipped
      }
    }
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }
}

/**
 * The experiment store of a run store (same database, either engine).
 * @throws Error when the run store is neither engine (see `storeSqlOf`).
 */
export function experimentStoreOf(store: RunStore): ExperimentStore {
  return new ExperimentStore(storeSqlOf(store, 'experiments'));
}
