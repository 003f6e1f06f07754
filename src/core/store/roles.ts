/**
 * Least-privilege database roles of a PostgreSQL team store (`loupe store grant`): what an annotator, a reviewer and the
 * owner may do, granted exactly (every privilege a role held on the store's tables is revoked first, so granting again
 * or granting less leaves only what the new access allows). The database then enforces, whatever a client sends:
 * annotations, checklist and ground-truth versions are append-only for every role but the owner (migration 18's
 * trigger); a blind annotator reads no expected answer (`scores`, `judgements.verdict`, checklists, ground truth) and
 * no other verdict of an item in a blind queue before answering it (row-level security on `annotations`, the views
 * `annotation_meta` and `judge_verdicts_revealed`). A SQLite file has no roles.
 * Source: issue 39 "least-privilege roles", "blind annotator".
 */
import { pgPoolOf, pgTransaction } from './pg-run-store.ts';
import type { RunStore } from './types.ts';
import { LoupeInputError } from '../util/errors.ts';
import { quoteIdent } from '../util/sql.ts';

/** What a role may do on a team store. */
export type StoreAccess = 'annotator' | 'reviewer' | 'owner';

export const STORE_ACCESS: readonly StoreAccess[] = ['annotator', 'reviewer', 'owner'];

/** The run's record and its evidence: what an annotator reads to judge an item (never its expected answers). */
const RUN_TABLES = [
  'runs',
  'steps',
  'answers',
  'notes',
  'saved_code',
  'kernel_cells',
  'cell_figures',
  'run_events',
  'interventions',
  'run_artefacts',
  'artefact_blobs',
];

/** `judgements` columns an annotator reads (the annotation store itemises judgements from them); not the verdict, raw output or error. */
const JUDGEMENT_COLUMNS_READ = [
  'cache_key',
  'judge_id',
  'task',
  'input_hash',
  'prompt_hash',
  'input',
  'status',
  'run_id',
  'item_ref',
  'annotator',
  'judged_at',
  'rid',
];

/** A privilege on a table (or view), optionally on some columns only. */
export interface TableGrant {
  table: string;
  privileges: string[];
  columns?: string[];
}

const grants = (tables: string[], ...privileges: string[]): TableGrant[] =>
  tables.map((table) => ({ table, privileges }));

/** Exactly what an annotator is granted. */
const ANNOTATOR: TableGrant[] = [
  { table: 'migrations', privileges: ['SELECT'] },
  ...grants(RUN_TABLES, 'SELECT'),
  { table: 'judgements', privileges: ['SELECT'], columns: JUDGEMENT_COLUMNS_READ },
  { table: 'annotation_sync', privileges: ['SELECT', 'UPDATE'] },
  { table: 'annotation_items', privileges: ['SELECT', 'INSERT'] },
  { table: 'annotation_items', privileges: ['UPDATE'], columns: ['suite_version'] },
  { table: 'annotations', privileges: ['SELECT', 'INSERT'] },
  { table: 'annotation_meta', privileges: ['SELECT'] },
  { table: 'judge_verdicts_revealed', privileges: ['SELECT'] },
  ...grants(['annotation_queues', 'annotation_queue_items'], 'SELECT'),
  ...grants(['annotation_reservations', 'annotation_drafts'], 'SELECT', 'INSERT', 'UPDATE', 'DELETE'),
  // issue 43: an annotator reads experiments, instructions and assignments, and saves their own run filters
  ...grants(['run_labels', 'queue_instructions', 'queue_assignments'], 'SELECT'),
  ...grants(['saved_filters'], 'SELECT', 'INSERT'),
];

/** Exactly what a reviewer is granted: an annotator's rights, the expected answers, queues, scoring and expert artefacts. */
const REVIEWER: TableGrant[] = [
  ...ANNOTATOR,
  ...grants(['judgements', 'scores', 'checklist_versions', 'blade_gt_versions'], 'SELECT'),
  ...grants(['judgements', 'scores', 'run_artefacts', 'artefact_blobs', 'annotation_queues'], 'INSERT', 'UPDATE'),
  ...grants(['annotation_queue_items', 'checklist_versions', 'blade_gt_versions'], 'INSERT'),
  // issue 43: a reviewer tags and renames runs, writes queue instructions and assigns items (append-only rows)
  ...grants(['run_labels', 'queue_instructions', 'queue_assignments'], 'INSERT'),
];

/** Every table and view of the store a grant concerns (privileges on them are revoked before granting). */
const STORE_RELATIONS = [...new Set([...REVIEWER.map((g) => g.table)])];

/**
 * The privileges each access grants, table by table (for the README's table and `--json`).
 * @param access annotator | reviewer (owner: membership in the tables' owner role, every privilege).
 * @returns the grants, in the order they are applied.
 */
export function storeGrants(access: 'annotator' | 'reviewer'): readonly TableGrant[] {
  return access === 'annotator' ? ANNOTATOR : REVIEWER;
}

/** What {@link grantStoreRole} did. */
export interface GrantReport {
  role: string;
  access: StoreAccess;
  /** The role owning the store's tables. */
  owner: string;
  /** Privileges granted (owner: none listed, membership in `owner` instead). */
  grants: TableGrant[];
  /** Whether the role was (or is now) a member of the owner role. */
  ownerMember: boolean;
}

/**
 * Grants a database role exactly what `access` allows on a PostgreSQL team store, in one transaction: privileges the
 * role held on the store's tables and views (and their `rid` sequences) are revoked, and its membership in the owner
 * role too, then annotator: read runs and their evidence, item inputs, queues; write annotations, items, drafts and
 * reservations; reviewer: also the expected answers (scores, judge verdicts, checklists, ground truth), open queues,
 * score, write checklist and ground-truth versions; owner: membership in the role owning the tables (everything:
 * delete runs, copy the store, migrate it). Idempotent. Source: issue 39.
 * @param store an open (migrated) PostgreSQL run store, connected as its owner (or a superuser).
 * @param role an existing database role (a login created with `CREATE ROLE name LOGIN PASSWORD ...`).
 * @returns what was granted.
 * @throws LoupeInputError naming the store for a SQLite file (no roles), naming the role when it does not exist, is a
 *   superuser or the owner itself (it cannot be restricted), or when the connecting role may not grant.
 */
export async function grantStoreRole(store: RunStore, role: string, access: StoreAccess): Promise<GrantReport> {
  if (!STORE_ACCESS.includes(access)) {
    throw new LoupeInputError('access', `must be ${STORE_ACCESS.join(', ')}, got '${String(access)}'`);
  }
  if (store.engine !== 'postgres') {
    throw new LoupeInputError(
      store.location,
      "a SQLite store file has no database roles: whoever can write the file can change anything in it (its append-only triggers guard against mistakes, not against the file's owner). Grant roles on a PostgreSQL team store",
    );
  }
  const pool = pgPoolOf(store);
  const client = await pool.connect();
  return pgTransaction(client, async () => {
    const q = async (sql: string, params: unknown[] = []) =>
      (await client.query(sql, params)).rows as Array<Record<string, unknown>>;
    const [r] = await q('SELECT rolname, rolsuper FROM pg_roles WHERE rolname = $1', [role]);
    if (!r) {
      throw new LoupeInputError(
        `role ${role}`,
        'does not exist on this server: create the login first (CREATE ROLE ... LOGIN PASSWORD ...), then grant it',
      );
    }
    const [o] =
      await q(`SELECT pg_get_userbyid(relowner) AS owner, pg_has_role(current_user, relowner, 'MEMBER') AS may, current_schema() AS schema, current_user AS me
      FROM pg_class WHERE oid = 'annotations'::regclass`);
    const owner = o!.owner as string;
    if (!o!.may) {
      throw new LoupeInputError(
        `role ${o!.me as string}`,
        `may not grant on ${store.location}: connect as the role owning its tables (${owner}) or a superuser`,
      );
    }
    if (role === owner) {
      if (access === 'owner') return { role, access, owner, grants: [], ownerMember: true };
      throw new LoupeInputError(
        `role ${role}`,
        `owns the store's tables, so nothing can be withheld from it; give the expert a login of their own and grant that one as ${access}`,
      );
    }
    if (r.rolsuper && access !== 'owner') {
      throw new LoupeInputError(
        `role ${role}`,
        `is a superuser: the database cannot restrict it, so it cannot be an ${access}; give the expert a login that is not a superuser`,
      );
    }
    const id = quoteIdent(role);
    // exactly: what the role held on the store's relations goes first (table-level REVOKE drops column privileges too)
    const present = (
      await q(
        'SELECT c.relname AS name FROM pg_class c WHERE c.relnamespace = (SELECT n.oid FROM pg_namespace n WHERE n.nspname = current_schema()) AND c.relname = ANY($1::text[])',
        [STORE_RELATIONS],
      )
    ).map((x) => x.name as string);
    const missing = STORE_RELATIONS.filter((t) => !present.includes(t));
    if (missing.length) {
      throw new LoupeInputError(
        store.location,
        `is missing ${missing.join(', ')}: open it once with this Loupe (as its owner) to bring its schema up to date`,
      );
    }
    const sequences = async (tables: string[]) =>
      (
        await q(
          `SELECT DISTINCT pg_get_serial_sequence(quote_ident(t), 'rid') AS s FROM unnest($1::text[]) t
      WHERE EXISTS (SELECT 1 FROM information_schema.columns c WHERE c.table_schema = current_schema() AND c.table_name = t AND c.column_name = 'rid')`,
          [tables],
        )
      )
        .map((x) => x.s as string | null)
        .filter((s): s is string => !!s);
    await q(`REVOKE ALL ON ${present.map(quoteIdent).join(', ')} FROM ${id}`);
    const seqAll = await sequences(present);
    if (seqAll.length) await q(`REVOKE ALL ON SEQUENCE ${seqAll.join(', ')} FROM ${id}`);
    const member =
      (
        await q(
          `SELECT 1 FROM pg_auth_members m WHERE m.roleid = (SELECT oid FROM pg_roles WHERE rolname = $1) AND m.member = (SELECT oid FROM pg_roles WHERE rolname = $2)`,
          [owner, role],
        )
      ).length > 0;
    if (access === 'owner') {
      if (!member) {
        try {
          await q(`GRANT ${quoteIdent(owner)} TO ${id}`);
        } catch (e) {
          if ((e as { code?: string }).code !== '42501') throw e;
          throw new LoupeInputError(
            `role ${o!.me as string}`,
            `may not make ${role} a member of ${owner} (the owner of the store's tables): connect as a superuser or a role with ADMIN OPTION on ${owner}`,
            { cause: e },
          );
        }
      }
      return { role, access, owner, grants: [], ownerMember: true };
    }
    if (member) await q(`REVOKE ${quoteIdent(owner)} FROM ${id}`);
    await q(`GRANT USAGE ON SCHEMA ${quoteIdent(o!.schema as string)} TO ${id}`);
    const list = [...storeGrants(access)];
    for (const g of list) {
      const privs = g.columns
        ? g.privileges.map((p) => `${p} (${g.columns!.map(quoteIdent).join(', ')})`).join(', ')
        : g.privileges.join(', ');
      await q(`GRANT ${privs} ON ${quoteIdent(g.table)} TO ${id}`);
    }
    const inserted = [...new Set(list.filter((g) => g.privileges.includes('INSERT')).map((g) => g.table))];
    const seqs = await sequences(inserted);
    if (seqs.length) await q(`GRANT USAGE ON SEQUENCE ${seqs.join(', ')} TO ${id}`);
    return { role, access, owner, grants: list, ownerMember: false };
  });
}
