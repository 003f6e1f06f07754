/**
 * The run store's migrations on PostgreSQL: the same ids, names, tables and columns as `migrations.ts` (SQLite),
 * translated where SQLite's dialect differs. Types: `REAL` → `DOUBLE PRECISION`, `BLOB` → `BYTEA`, counters
 * `BIGINT`; JSON columns stay `TEXT` holding the same JSON; 0/1 flags stay integers. SQLite's implicit `rowid`
 * (insertion order: answers, events, copies) is an explicit `rid BIGSERIAL` column on every table. Every SQLite
 * migration must be either translated here or listed as portable, so a new one cannot be forgotten
 * ({@link pgMigrations} throws).
 * Source: issue 26 "Same logical schema and migrations as SQLite".
 */
import { migrations as sqliteMigrations, type Migration } from './migrations.ts';

/** Migrations whose SQLite text runs unchanged on PostgreSQL (then the statements of {@link RID_AFTER}). */
const PORTABLE = new Set([3, 4, 5, 6, 7, 8, 12, 15, 17]);

/** After a portable migration: the insertion-order column (SQLite's rowid) of each table it created. */
const RID_AFTER: Record<number, string[]> = {
  6: ['annotation_items', 'annotations', 'annotation_queues', 'annotation_queue_items', 'annotation_reservations', 'annotation_drafts'],
  7: ['checklist_versions'],
  8: ['blade_gt_versions'],
  12: ['interventions'],
};

/** PostgreSQL text of the migrations that differ. */
const TRANSLATED: Record<number, string> = {
  1: `
CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  suite TEXT NOT NULL,
  block_id TEXT NOT NULL,
  agent TEXT NOT NULL,
  model TEXT,
  params TEXT NOT NULL,
  prompt_hash TEXT NOT NULL,
  tool_set TEXT NOT NULL,
  data_checksums TEXT NOT NULL,
  loupe_version TEXT NOT NULL,
  sandbox TEXT NOT NULL,
  workspace TEXT NOT NULL,
  status TEXT NOT NULL,
  status_reason TEXT,
  created_at TEXT NOT NULL,
  started_at TEXT,
  ended_at TEXT,
  duration_ms BIGINT NOT NULL DEFAULT 0,
  steps INTEGER NOT NULL DEFAULT 0,
  tokens_input BIGINT NOT NULL DEFAULT 0,
  tokens_output BIGINT NOT NULL DEFAULT 0,
  tokens_cached BIGINT NOT NULL DEFAULT 0,
  cost_usd DOUBLE PRECISION,
  state TEXT,
  rid BIGSERIAL NOT NULL
);
CREATE INDEX runs_block ON runs (suite, block_id);

CREATE TABLE steps (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  started_at TEXT NOT NULL,
  ended_at TEXT NOT NULL,
  latency_ms DOUBLE PRECISION NOT NULL,
  tool_ms DOUBLE PRECISION NOT NULL,
  assistant TEXT NOT NULL,
  tool_calls TEXT NOT NULL,
  extra_messages TEXT NOT NULL,
  tokens_input BIGINT NOT NULL,
  tokens_output BIGINT NOT NULL,
  tokens_cached BIGINT NOT NULL,
  cost_usd DOUBLE PRECISION,
  finish_reason TEXT,
  seq BIGINT NOT NULL,
  rid BIGSERIAL NOT NULL,
  PRIMARY KEY (run_id, idx)
);
CREATE INDEX steps_seq ON steps (seq);

CREATE TABLE answers (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  query_id TEXT NOT NULL,
  answer TEXT NOT NULL,
  raw TEXT NOT NULL,
  step_idx INTEGER NOT NULL,
  rid BIGSERIAL NOT NULL,
  PRIMARY KEY (run_id, query_id)
);

CREATE TABLE notes (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  content TEXT NOT NULL,
  rid BIGSERIAL NOT NULL,
  PRIMARY KEY (run_id, idx)
);

CREATE TABLE saved_code (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step_idx INTEGER NOT NULL,
  code TEXT NOT NULL,
  rid BIGSERIAL NOT NULL,
  PRIMARY KEY (run_id, step_idx)
);

CREATE TABLE kernel_cells (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  step_idx INTEGER NOT NULL,
  code TEXT NOT NULL,
  status TEXT NOT NULL,
  stdout TEXT NOT NULL,
  stderr TEXT NOT NULL,
  result TEXT,
  error TEXT,
  tables TEXT NOT NULL,
  duration_ms DOUBLE PRECISION NOT NULL,
  replay INTEGER NOT NULL DEFAULT 0,
  rid BIGSERIAL NOT NULL,
  PRIMARY KEY (run_id, seq)
);

CREATE TABLE cell_figures (
  run_id TEXT NOT NULL,
  cell_seq INTEGER NOT NULL,
  idx INTEGER NOT NULL,
  png BYTEA NOT NULL,
  rid BIGSERIAL NOT NULL,
  PRIMARY KEY (run_id, cell_seq, idx),
  FOREIGN KEY (run_id, cell_seq) REFERENCES kernel_cells(run_id, seq) ON DELETE CASCADE
);

CREATE TABLE run_events (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  at TEXT NOT NULL,
  kind TEXT NOT NULL,
  message TEXT NOT NULL,
  rid BIGSERIAL PRIMARY KEY
);
CREATE INDEX run_events_run ON run_events (run_id);
`,
  2: `
CREATE TABLE judgements (
  cache_key TEXT PRIMARY KEY,
  judge_id TEXT NOT NULL,
  task TEXT NOT NULL,
  input_hash TEXT NOT NULL,
  prompt_hash TEXT,
  input TEXT NOT NULL,
  raw_output TEXT,
  verdict TEXT,
  status TEXT NOT NULL,
  error TEXT,
  run_id TEXT,
  item_ref TEXT,
  annotator TEXT,
  judged_at TEXT NOT NULL,
  rid BIGSERIAL NOT NULL
);
CREATE INDEX judgements_pending ON judgements (status, task);
CREATE INDEX judgements_run ON judgements (run_id);
CREATE INDEX judgements_input ON judgements (input_hash);

CREATE TABLE scores (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  benchmark TEXT NOT NULL,
  judge_id TEXT NOT NULL,
  options TEXT NOT NULL,
  summary TEXT NOT NULL,
  detail TEXT NOT NULL,
  pending INTEGER NOT NULL DEFAULT 0,
  scored_at TEXT NOT NULL,
  PRIMARY KEY (run_id, judge_id, options)
);
`,
  9: `
CREATE TABLE annotation_sync (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  judgements_from BIGINT
);
INSERT INTO annotation_sync (id, judgements_from) SELECT 1, MIN(rid) FROM judgements;
CREATE FUNCTION annotation_sync_lower() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE annotation_sync SET judgements_from = LEAST(COALESCE(judgements_from, NEW.rid), NEW.rid) WHERE id = 1;
  RETURN NEW;
END $$;
CREATE TRIGGER annotation_sync_judgement_insert AFTER INSERT ON judgements FOR EACH ROW EXECUTE FUNCTION annotation_sync_lower();
CREATE TRIGGER annotation_sync_judgement_update AFTER UPDATE OF task, judge_id, input_hash ON judgements FOR EACH ROW EXECUTE FUNCTION annotation_sync_lower();
CREATE INDEX judgements_judged ON judgements (judged_at);
CREATE INDEX judgements_item ON judgements (input_hash, task, judge_id);
DROP INDEX judgements_input;
CREATE INDEX annotation_items_unknown_suite ON annotation_items (run_id) WHERE suite_version = 'unknown';
`,
  16: `
-- Annotations written before this migration keep NULL (who wrote them is not known); new rows get the role the
-- writing connection logged in as. A role that does not own the table (an annotator's login) cannot choose the value:
-- the trigger overwrites whatever its client sent. Only the table's owner (the role that migrates the store and runs
-- loupe store copy) may carry a role recorded elsewhere over, so a copy keeps who wrote each annotation.
ALTER TABLE annotations ADD COLUMN db_role TEXT;
ALTER TABLE annotations ALTER COLUMN db_role SET DEFAULT current_user;
CREATE FUNCTION annotations_db_role() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF pg_has_role(current_user, (SELECT relowner FROM pg_class WHERE oid = TG_RELID), 'MEMBER') THEN
    RETURN NEW;
  END IF;
  IF TG_OP = 'INSERT' THEN
    NEW.db_role := current_user;
  ELSE
    NEW.db_role := OLD.db_role;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER annotations_db_role BEFORE INSERT OR UPDATE ON annotations FOR EACH ROW EXECUTE FUNCTION annotations_db_role();

CREATE TABLE artefact_blobs (
  sha256 TEXT PRIMARY KEY,
  media_type TEXT NOT NULL,
  size BIGINT NOT NULL,
  bytes BYTEA NOT NULL,
  created_at TEXT NOT NULL,
  rid BIGSERIAL NOT NULL
);
CREATE TABLE run_artefacts (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  path TEXT NOT NULL,
  sha256 TEXT NOT NULL REFERENCES artefact_blobs(sha256),
  captured_at TEXT NOT NULL,
  rid BIGSERIAL NOT NULL,
  PRIMARY KEY (run_id, path)
);
CREATE INDEX run_artefacts_blob ON run_artefacts (sha256);
`,
  18: `
-- Expert judgements are append-only for every role but the store's owner (the tables' owner and its members: the role
-- that migrates the store, runs \`loupe store copy\` and deletes runs). Whatever privileges a role was granted, an UPDATE,
-- DELETE or TRUNCATE by it is refused here; \`loupe store grant\` does not grant them to annotators or reviewers either.
CREATE FUNCTION loupe_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF pg_has_role(current_user, (SELECT relowner FROM pg_class WHERE oid = TG_RELID), 'MEMBER') THEN
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    RETURN NEW;
  END IF;
  RAISE EXCEPTION '% are append-only: role % may not %; a correction is a new row (an annotation that supersedes, a new version), and only the store''s owner deletes', TG_TABLE_NAME, current_user, TG_OP
    USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER annotations_append_only BEFORE UPDATE OR DELETE ON annotations FOR EACH ROW EXECUTE FUNCTION loupe_append_only();
CREATE TRIGGER annotations_append_only_truncate BEFORE TRUNCATE ON annotations FOR EACH STATEMENT EXECUTE FUNCTION loupe_append_only();
CREATE TRIGGER checklist_versions_append_only BEFORE UPDATE OR DELETE ON checklist_versions FOR EACH ROW EXECUTE FUNCTION loupe_append_only();
CREATE TRIGGER checklist_versions_append_only_truncate BEFORE TRUNCATE ON checklist_versions FOR EACH STATEMENT EXECUTE FUNCTION loupe_append_only();
CREATE TRIGGER blade_gt_versions_append_only BEFORE UPDATE OR DELETE ON blade_gt_versions FOR EACH ROW EXECUTE FUNCTION loupe_append_only();
CREATE TRIGGER blade_gt_versions_append_only_truncate BEFORE TRUNCATE ON blade_gt_versions FOR EACH STATEMENT EXECUTE FUNCTION loupe_append_only();

-- Blind reading. A role sees every verdict when it may read the expected answers (SELECT on judgements.verdict: the
-- owner, reviewers, a role granted everything by hand). Any other role (an annotator granted by \`loupe store grant\`)
-- sees an item's other verdicts (annotations of other roles, the LLM's) only once it has annotated the item itself, or
-- when no blind queue holds the item. loupe_hidden_items lists the items hidden from a role: SECURITY DEFINER (owned by
-- the tables' owner, which row-level security does not restrict) since it reads annotations and queues the caller may
-- not; its search_path is pinned (a caller's temporary tables cannot stand in for the store's). The policy calls it
-- once per statement (an uncorrelated subquery, hashed), never once per row.
CREATE FUNCTION loupe_hidden_items(who name) RETURNS SETOF text LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
  SELECT DISTINCT qi.item_id FROM annotation_queue_items qi JOIN annotation_queues q ON q.id = qi.queue_id
  WHERE q.blind = 1 AND NOT has_column_privilege(who, 'judgements', 'verdict', 'SELECT')
    AND NOT EXISTS (SELECT 1 FROM annotations a WHERE a.item_id = qi.item_id AND a.db_role = who::text)
$$;
ALTER TABLE annotations ENABLE ROW LEVEL SECURITY;
-- (SELECT has_column_privilege(...)) is evaluated once per statement: a role that reads everything pays no per-row check.
CREATE POLICY annotations_read ON annotations FOR SELECT
  USING ((SELECT has_column_privilege('judgements', 'verdict', 'SELECT')) OR db_role = current_user::text OR item_id NOT IN (SELECT loupe_hidden_items(current_user)));
CREATE POLICY annotations_insert ON annotations FOR INSERT WITH CHECK (true);
-- UPDATE and DELETE reach the append-only trigger, which refuses them with a message (rather than matching no row).
CREATE POLICY annotations_update ON annotations FOR UPDATE USING (true);
CREATE POLICY annotations_delete ON annotations FOR DELETE USING (true);
-- Who annotated which item (no verdict, evidence or note): queues count reviewers per item and show progress from it.
CREATE VIEW annotation_meta AS SELECT id, item_id, annotator, role, supersedes, final, origin, created_at, db_role FROM annotations;
-- The LLM judge's verdicts of items, each only where the caller may see it (see loupe_hidden_items): what a blind
-- annotator's panel shows after answering. security_barrier: a caller's own functions cannot see rows filtered out.
CREATE VIEW judge_verdicts_revealed WITH (security_barrier) AS
  SELECT i.id AS item_id, j.judge_id, j.verdict, j.judged_at, j.rid FROM annotation_items i JOIN judgements j ON j.input_hash = i.input_hash AND j.task = i.task
  WHERE j.judge_id LIKE 'llm:%' AND j.status = 'done' AND ((SELECT has_column_privilege('judgements', 'verdict', 'SELECT')) OR i.id NOT IN (SELECT loupe_hidden_items(current_user)));
`,
};

/**
 * The PostgreSQL migrations, in the SQLite list's order with the same ids and names.
 * @param extra migrations of other areas (their SQL must be portable).
 * @returns the list to apply.
 * @throws Error naming a SQLite migration that is neither translated nor marked portable.
 */
export function pgMigrations(extra: Migration[] = []): Migration[] {
  const built = sqliteMigrations.map((m) => {
    const rid = (RID_AFTER[m.id] ?? []).map((t) => `ALTER TABLE ${t} ADD COLUMN rid BIGSERIAL NOT NULL;`).join('\n');
    const sql = TRANSLATED[m.id] ?? (PORTABLE.has(m.id) ? `${m.sql}\n${rid}` : undefined);
    if (sql === undefined) throw new Error(`run store migration ${m.id} ('${m.name}') has no PostgreSQL translation in pg-migrations.ts`);
    return { ...m, sql };
  });
  return [...built, ...extra];
}
