/**
 * Numbered schema migrations of the run store. To change the schema, APPEND an entry with the next
 * id (never edit an applied one). `openStore` applies, in one transaction each, every migration whose
 * id is above the highest id recorded in the `migrations` table.
 * Source: issue 5 "Run store (SQLite via better-sqlite3, WAL, migrations)".
 */
export interface Migration {
  id: number;
  name: string;
  sql: string;
}

export const migrations: Migration[] = [
  {
    id: 1,
    name: 'runs, steps, answers, notes, code, kernel cells, run events',
    sql: `
CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  suite TEXT NOT NULL,
  block_id TEXT NOT NULL,
  agent TEXT NOT NULL,
  model TEXT,
  params TEXT NOT NULL,            -- JSON RunParams (never holds the API key)
  prompt_hash TEXT NOT NULL,
  tool_set TEXT NOT NULL,
  data_checksums TEXT NOT NULL,    -- JSON { path: sha256 }
  loupe_version TEXT NOT NULL,
  sandbox TEXT NOT NULL,
  workspace TEXT NOT NULL,
  status TEXT NOT NULL,
  status_reason TEXT,
  created_at TEXT NOT NULL,
  started_at TEXT,
  ended_at TEXT,
  duration_ms INTEGER NOT NULL DEFAULT 0,
  steps INTEGER NOT NULL DEFAULT 0,
  tokens_input INTEGER NOT NULL DEFAULT 0,
  tokens_output INTEGER NOT NULL DEFAULT 0,
  tokens_cached INTEGER NOT NULL DEFAULT 0,
  cost_usd REAL,
  state TEXT                        -- JSON RunState.extra / notes / code snapshot after the last step
);
CREATE INDEX runs_block ON runs (suite, block_id);

CREATE TABLE steps (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  started_at TEXT NOT NULL,
  ended_at TEXT NOT NULL,
  latency_ms REAL NOT NULL,
  tool_ms REAL NOT NULL,
  assistant TEXT NOT NULL,          -- JSON AssistantMessage
  tool_calls TEXT NOT NULL,         -- JSON ToolCallRecord[]
  extra_messages TEXT NOT NULL,     -- JSON ChatMessage[]
  tokens_input INTEGER NOT NULL,
  tokens_output INTEGER NOT NULL,
  tokens_cached INTEGER NOT NULL,
  cost_usd REAL,
  finish_reason TEXT,
  seq INTEGER NOT NULL,             -- global insertion order (for subscribers)
  PRIMARY KEY (run_id, idx)
);
CREATE INDEX steps_seq ON steps (seq);

CREATE TABLE answers (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  query_id TEXT NOT NULL,
  answer TEXT NOT NULL,             -- JSON number | number[]
  raw TEXT NOT NULL,
  step_idx INTEGER NOT NULL,
  PRIMARY KEY (run_id, query_id)
);

CREATE TABLE notes (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,             -- 0-based position
  content TEXT NOT NULL,
  PRIMARY KEY (run_id, idx)
);

CREATE TABLE saved_code (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step_idx INTEGER NOT NULL,
  code TEXT NOT NULL,
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
  error TEXT,                       -- JSON
  tables TEXT NOT NULL,             -- JSON
  duration_ms REAL NOT NULL,
  replay INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, seq)
);

CREATE TABLE cell_figures (
  run_id TEXT NOT NULL,
  cell_seq INTEGER NOT NULL,
  idx INTEGER NOT NULL,
  png BLOB NOT NULL,
  PRIMARY KEY (run_id, cell_seq, idx),
  FOREIGN KEY (run_id, cell_seq) REFERENCES kernel_cells(run_id, seq) ON DELETE CASCADE
);

CREATE TABLE run_events (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  at TEXT NOT NULL,
  kind TEXT NOT NULL,
  message TEXT NOT NULL
);
CREATE INDEX run_events_run ON run_events (run_id);
`,
  },
  {
    id: 2,
    name: 'evaluation: judgements (LLM / human / exact) and scores',
    sql: `
CREATE TABLE judgements (
  cache_key TEXT PRIMARY KEY,       -- hash of judge id + task + prompt (LLM) or input (human)
  judge_id TEXT NOT NULL,           -- llm:<model> | human | exact | none | ...
  task TEXT NOT NULL,               -- semantic-match | checklist-support | checklist-score | ...
  input_hash TEXT NOT NULL,
  prompt_hash TEXT,
  input TEXT NOT NULL,              -- JSON
  raw_output TEXT,
  verdict TEXT,                     -- JSON, NULL while pending / on error
  status TEXT NOT NULL,             -- done | pending | error
  error TEXT,
  run_id TEXT,                      -- first run that asked (no FK: judgements outlive runs)
  item_ref TEXT,
  annotator TEXT,
  judged_at TEXT NOT NULL
);
CREATE INDEX judgements_pending ON judgements (status, task);
CREATE INDEX judgements_run ON judgements (run_id);
CREATE INDEX judgements_input ON judgements (input_hash);

CREATE TABLE scores (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  benchmark TEXT NOT NULL,
  judge_id TEXT NOT NULL,
  options TEXT NOT NULL,            -- JSON, keys sorted
  summary TEXT NOT NULL,            -- JSON headline metrics
  detail TEXT NOT NULL,             -- JSON full score
  pending INTEGER NOT NULL DEFAULT 0,
  scored_at TEXT NOT NULL,
  PRIMARY KEY (run_id, judge_id, options)
);
`,
  },
  {
    id: 3,
    name: 'kernel_cells.restarted: the kernel lost its state during this cell (replay starts after it)',
    sql: 'ALTER TABLE kernel_cells ADD COLUMN restarted INTEGER NOT NULL DEFAULT 0;',
  },
  {
    id: 4,
    name: 'runs.owner_pid and runs.heartbeat_at: which process drives a running run (stale runs after a kill)',
    sql: 'ALTER TABLE runs ADD COLUMN owner_pid INTEGER; ALTER TABLE runs ADD COLUMN heartbeat_at TEXT;',
  },
  {
    id: 5,
    name: 'run lease: one owner per run (owner id, host, expiry), taken by one conditional update',
    sql: 'ALTER TABLE runs ADD COLUMN lease_owner TEXT; ALTER TABLE runs ADD COLUMN lease_host TEXT; ALTER TABLE runs ADD COLUMN lease_expires_at TEXT;',
  },
  {
    id: 6,
    name: 'annotation model: items (any subject), append-only annotations, queues, reservations; human verdicts of judgements migrate',
    sql: `
CREATE TABLE annotation_items (
  id TEXT PRIMARY KEY,              -- 'j:<task>:<input hash>' for judgement subjects; '<kind>:<hash>' otherwise
  subject_kind TEXT NOT NULL,       -- judgement | step | span | run-pair | blade-decision
  subject TEXT NOT NULL,            -- JSON Subject
  task TEXT NOT NULL,               -- verdict schema: a judge task name, or another item kind
  schema_version TEXT NOT NULL,     -- hash of the verdict schema
  input TEXT NOT NULL,              -- JSON: what is judged (the judge input for judgement subjects)
  input_hash TEXT,
  criterion TEXT,                   -- the criterion / checklist item, for filters and per-criterion agreement
  suite TEXT,
  run_id TEXT,                      -- no FK: annotations outlive runs (shown as orphaned)
  item_ref TEXT,
  suite_version TEXT NOT NULL DEFAULT 'unknown',
  created_at TEXT NOT NULL
);
CREATE INDEX annotation_items_task ON annotation_items (task, criterion);
CREATE INDEX annotation_items_run ON annotation_items (run_id);

CREATE TABLE annotations (
  id TEXT PRIMARY KEY,              -- uuid; import is idempotent by it
  item_id TEXT NOT NULL,
  annotator TEXT NOT NULL,
  role TEXT NOT NULL,               -- annotator | adjudicator
  verdict TEXT NOT NULL,            -- JSON, valid for the item's schema
  evidence TEXT NOT NULL DEFAULT '[]',
  note TEXT,
  supersedes TEXT,                  -- id of the annotation this one edits
  final INTEGER NOT NULL DEFAULT 0, -- 1: an adjudicated verdict
  origin TEXT NOT NULL,             -- panel | cli | import | migrated
  created_at TEXT NOT NULL
);
CREATE INDEX annotations_item ON annotations (item_id, created_at);
CREATE INDEX annotations_annotator ON annotations (annotator, item_id);

CREATE TABLE annotation_queues (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  kind TEXT NOT NULL,               -- items | audit | disagreement
  spec TEXT NOT NULL,               -- JSON QueueSpec
  reviewers INTEGER NOT NULL DEFAULT 1,
  reservation_ms INTEGER NOT NULL DEFAULT 1800000,
  blind INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL
);
CREATE TABLE annotation_queue_items (
  queue_id TEXT NOT NULL REFERENCES annotation_queues(id) ON DELETE CASCADE,
  pos INTEGER NOT NULL,
  item_id TEXT NOT NULL,
  PRIMARY KEY (queue_id, pos)
);
CREATE UNIQUE INDEX annotation_queue_items_item ON annotation_queue_items (queue_id, item_id);
CREATE TABLE annotation_reservations (
  queue_id TEXT NOT NULL,
  item_id TEXT NOT NULL,
  annotator TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  PRIMARY KEY (queue_id, item_id, annotator)
);

CREATE TABLE annotation_drafts (       -- an annotator's unsubmitted choice on a queue item (survives a reload)
  queue_id TEXT NOT NULL,
  item_id TEXT NOT NULL,
  annotator TEXT NOT NULL,
  draft TEXT NOT NULL,              -- JSON { choice, note, evidence }
  updated_at TEXT NOT NULL,
  PRIMARY KEY (queue_id, item_id, annotator)
);

-- Human verdicts stored before this migration (one row per input hash in judgements) become annotations.
INSERT INTO annotations (id, item_id, annotator, role, verdict, evidence, note, supersedes, final, origin, created_at)
  SELECT 'migrated:' || cache_key, 'j:' || task || ':' || input_hash, COALESCE(annotator, 'unknown'), 'annotator', verdict, '[]',
    raw_output, NULL, 0, 'migrated', judged_at
  FROM judgements WHERE judge_id = 'human' AND status = 'done' AND verdict IS NOT NULL;
`,
  },
  {
    id: 7,
    name: 'checklist versions (issue 15): expert-authored checklists of a block, one immutable snapshot per version',
    sql: `
CREATE TABLE checklist_versions (
  suite_id TEXT NOT NULL,           -- Suite.id (kind and scenario/root name)
  block_id TEXT NOT NULL,
  suite TEXT NOT NULL,              -- benchmark kind
  version INTEGER NOT NULL,         -- 1, 2, ... per block
  parent INTEGER,                   -- the version this one was edited from (NULL for the first)
  hash TEXT NOT NULL,               -- sha256 of the canonical content of the items
  items TEXT NOT NULL,              -- JSON AuthoredChecklistItem[] (retired items kept, marked)
  author TEXT NOT NULL,
  created_at TEXT NOT NULL,
  note TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (suite_id, block_id, version)
);
`,
  },
  {
    id: 8,
    name: 'BLADE ground-truth versions (issue 17): a dataset\'s annotations.csv, one immutable full text per version',
    sql: `
CREATE TABLE blade_gt_versions (
  dataset TEXT NOT NULL,            -- BLADE dataset name (affairs, hurricane, ...)
  version INTEGER NOT NULL,         -- 1, 2, ... (0 is the shipped file, never stored)
  parent INTEGER NOT NULL,          -- the version it was edited from (0 = shipped)
  hash TEXT NOT NULL,               -- sha256 of the CSV text (line endings normalised)
  csv TEXT NOT NULL,                -- the whole annotations.csv, BLADE's own columns and JSON shapes
  author TEXT NOT NULL,
  created_at TEXT NOT NULL,
  note TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (dataset, version)
);
`,
  },
  {
    id: 9,
    name: 'annotation items from judgements incrementally (issue 23): a sync watermark kept by triggers, indexes for the sync order, the queue filter and unknown suite versions',
    sql: `
-- The lowest judgements rowid the annotation store has not itemised yet; NULL when every judgement is itemised.
-- Triggers lower it on every new judgement (and on a change of task, judge or input hash), whatever writes it,
-- so a sync with nothing new reads one row, and a sync reads only judgements from there on.
CREATE TABLE annotation_sync (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  judgements_from INTEGER
);
INSERT INTO annotation_sync (id, judgements_from) SELECT 1, MIN(rowid) FROM judgements;
CREATE TRIGGER annotation_sync_judgement_insert AFTER INSERT ON judgements BEGIN
  UPDATE annotation_sync SET judgements_from = MIN(COALESCE(judgements_from, NEW.rowid), NEW.rowid) WHERE id = 1;
END;
CREATE TRIGGER annotation_sync_judgement_update AFTER UPDATE OF task, judge_id, input_hash ON judgements BEGIN
  UPDATE annotation_sync SET judgements_from = MIN(COALESCE(judgements_from, NEW.rowid), NEW.rowid) WHERE id = 1;
END;
-- The sync itemises in (judged_at, rowid) order: read from this index, not sorted in a temporary b-tree.
CREATE INDEX judgements_judged ON judgements (judged_at);
-- "Has a human judgement" (queues of pending items) answered from the index alone; it replaces the
-- input-hash index (same leading column).
CREATE INDEX judgements_item ON judgements (input_hash, task, judge_id);
DROP INDEX judgements_input;
-- Items still waiting for their run's suite version (the run was missing or had no data checksums).
CREATE INDEX annotation_items_unknown_suite ON annotation_items (run_id) WHERE suite_version = 'unknown';
`,
  },
  {
    id: 12,
    name: 'interventions (issue 20): human steps — hints and corrections an analyst added to a paused run',
    sql: `
CREATE TABLE interventions (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,             -- 1, 2, ... per run
  before_step INTEGER NOT NULL,     -- 0-based index of the step whose model request first includes it
  at TEXT NOT NULL,
  who TEXT NOT NULL,
  kind TEXT NOT NULL,               -- hint | correction
  text TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
);
`,
  },
  {
    id: 15,
    name: 'unknown token counts (issue 24): runs and steps of external MCP clients, whose token use Loupe cannot see, read as null (not 0)',
    sql: `
ALTER TABLE runs ADD COLUMN tokens_known INTEGER NOT NULL DEFAULT 1;
ALTER TABLE steps ADD COLUMN tokens_known INTEGER NOT NULL DEFAULT 1;
`,
  },
  {
    id: 16,
    name: 'team identity and evidence (issue 26): the database role that wrote each annotation; run artefacts stored content-addressed',
    sql: `
-- The database role that wrote the annotation: PostgreSQL's current_user, filled by the server (column default and a
-- trigger, pg-migrations.ts); NULL on SQLite, which has no roles (and for annotations written before this migration).
ALTER TABLE annotations ADD COLUMN db_role TEXT;

-- Evidence a remote annotator needs (reports, figures, files an agent wrote that a score or review reads), kept in
-- the store by content: one row per distinct content (sha256 of the bytes) ...
CREATE TABLE artefact_blobs (
  sha256 TEXT PRIMARY KEY,          -- hex sha256 of bytes
  media_type TEXT NOT NULL,         -- e.g. text/markdown, image/png (from the name it was first stored under)
  size INTEGER NOT NULL,            -- bytes
  bytes BLOB NOT NULL,
  created_at TEXT NOT NULL
);
-- ... and one row per file of a run: its path relative to the run workspace and the content it held.
CREATE TABLE run_artefacts (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  path TEXT NOT NULL,               -- relative to the run workspace, '/' separated
  sha256 TEXT NOT NULL REFERENCES artefact_blobs(sha256),
  captured_at TEXT NOT NULL,
  PRIMARY KEY (run_id, path)
);
CREATE INDEX run_artefacts_blob ON run_artefacts (sha256);
`,
  },
  {
    id: 17,
    name: 'sweeps (issue 27): the sweep a queued run belongs to (blocks × repeats × model profiles run by workers)',
    sql: `
ALTER TABLE runs ADD COLUMN sweep_id TEXT;
CREATE INDEX runs_sweep ON runs (sweep_id);
`,
  },
  {
    id: 18,
    name: 'expert judgements append-only (issue 39): annotations, checklist and ground-truth versions refuse UPDATE and DELETE; PostgreSQL: roles, blind reading',
    sql: `
-- A correction is a new row (an annotation that supersedes, a new checklist or ground-truth version), never an edit.
-- An UPDATE that changes nothing passes (a repeated \`loupe store copy\` upserts the same rows); any change or DELETE is
-- refused. A SQLite file has no roles: whoever can write the file can drop these triggers, so they guard against
-- mistakes and tools, not against the file's owner (PostgreSQL enforces it per role, pg-migrations.ts).
CREATE TRIGGER annotations_append_only_update BEFORE UPDATE ON annotations
  WHEN NEW.id IS NOT OLD.id OR NEW.item_id IS NOT OLD.item_id OR NEW.annotator IS NOT OLD.annotator OR NEW.role IS NOT OLD.role
    OR NEW.verdict IS NOT OLD.verdict OR NEW.evidence IS NOT OLD.evidence OR NEW.note IS NOT OLD.note OR NEW.supersedes IS NOT OLD.supersedes
    OR NEW.final IS NOT OLD.final OR NEW.origin IS NOT OLD.origin OR NEW.created_at IS NOT OLD.created_at OR NEW.db_role IS NOT OLD.db_role
BEGIN SELECT RAISE(ABORT, 'annotations are append-only: an annotation is never changed (a correction is a new annotation that supersedes it)'); END;
CREATE TRIGGER annotations_append_only_delete BEFORE DELETE ON annotations
BEGIN SELECT RAISE(ABORT, 'annotations are append-only: an annotation is never deleted'); END;
CREATE TRIGGER checklist_versions_append_only_update BEFORE UPDATE ON checklist_versions
  WHEN NEW.suite_id IS NOT OLD.suite_id OR NEW.block_id IS NOT OLD.block_id OR NEW.suite IS NOT OLD.suite OR NEW.version IS NOT OLD.version
    OR NEW.parent IS NOT OLD.parent OR NEW.hash IS NOT OLD.hash OR NEW.items IS NOT OLD.items OR NEW.author IS NOT OLD.author
    OR NEW.created_at IS NOT OLD.created_at OR NEW.note IS NOT OLD.note
BEGIN SELECT RAISE(ABORT, 'checklist versions are append-only: a version is never changed (an edit is a new version)'); END;
CREATE TRIGGER checklist_versions_append_only_delete BEFORE DELETE ON checklist_versions
BEGIN SELECT RAISE(ABORT, 'checklist versions are append-only: a version is never deleted'); END;
CREATE TRIGGER blade_gt_versions_append_only_update BEFORE UPDATE ON blade_gt_versions
  WHEN NEW.dataset IS NOT OLD.dataset OR NEW.version IS NOT OLD.version OR NEW.parent IS NOT OLD.parent OR NEW.hash IS NOT OLD.hash
    OR NEW.csv IS NOT OLD.csv OR NEW.author IS NOT OLD.author OR NEW.created_at IS NOT OLD.created_at OR NEW.note IS NOT OLD.note
BEGIN SELECT RAISE(ABORT, 'ground-truth versions are append-only: a version is never changed (an edit is a new version)'); END;
CREATE TRIGGER blade_gt_versions_append_only_delete BEFORE DELETE ON blade_gt_versions
BEGIN SELECT RAISE(ABORT, 'ground-truth versions are append-only: a version is never deleted'); END;
`,
  },
];
