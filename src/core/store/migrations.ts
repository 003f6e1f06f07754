/**
 * Numbered schema migrations of the run store, one source for both engines (issue 41). Each entry describes its
 * tables, columns and indexes once with Kysely's schema builder; {@link migrationsFor} renders the SQL of a dialect
 * (SQLite, the embedded file; PostgreSQL, the team store). To change the schema, APPEND an entry with the next id
 * (never edit an applied one: a store that recorded id N never runs entry N again). `openStore` / `openPgStore` apply,
 * in order, every migration whose id is above the highest id recorded in the store's `migrations` table.
 *
 * Types are named once and mapped per dialect by {@link SchemaKit}: `float` is SQLite `REAL` / PostgreSQL
 * `DOUBLE PRECISION`, `bytes` `BLOB` / `BYTEA`, `bigint` (counters, byte sizes, insertion order) `INTEGER` / `BIGINT`;
 * JSON columns are `TEXT` holding the same JSON on both; 0/1 flags are integers on both. SQLite's implicit `rowid`
 * (insertion order: answers, events, copies) is an explicit `rid BIGSERIAL` column on PostgreSQL ({@link SchemaKit.rid}).
 * What only one engine has is written per dialect with {@link SchemaKit.only} and says why: SQLite triggers and
 * PostgreSQL trigger functions (their languages differ), and PostgreSQL's roles, row-level security and views of the
 * team store. `test/unit/core/store/schema-parity.test.ts` migrates both engines and compares the schemas.
 * Entries 1..18 render the schema the hand-written per-engine migrations of main d84c5fa created (stores of that code
 * recorded ids 1..18 and open unchanged: `test/unit/core/store/old-store.test.ts`).
 * Source: issue 5 "Run store (SQLite via better-sqlite3, WAL, migrations)"; issue 26 (PostgreSQL); issue 41.
 */
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  sql,
  type ColumnDataType,
  type Compilable,
  type CreateTableBuilder,
  type SchemaModule,
} from 'kysely';

/** A migration as the runners apply it: its id, name and the SQL text of one dialect. */
export interface Migration {
  id: number;
  name: string;
  sql: string;
}

/** The SQL dialects of the run store's engines. */
export type SqlDialect = 'sqlite' | 'postgres';

/** What a migration's description is written with: the schema builder of a dialect and its type names. */
export interface SchemaKit {
  dialect: SqlDialect;
  /** Kysely's schema builder (compiled only, never executed here). */
  schema: SchemaModule;
  /** Double-precision float: SQLite `REAL`, PostgreSQL `DOUBLE PRECISION`. */
  float: ColumnDataType;
  /** Bytes: SQLite `BLOB`, PostgreSQL `BYTEA`. */
  bytes: ColumnDataType;
  /** A 64-bit integer (counters, sizes, insertion order): SQLite `INTEGER` (64-bit already), PostgreSQL `BIGINT`. */
  bigint: ColumnDataType;
  /** The insertion-order column of every table: SQLite's implicit `rowid`, PostgreSQL's `rid`. */
  rowid: 'rowid' | 'rid';
  /** Adds PostgreSQL's `rid BIGSERIAL NOT NULL` (or the primary key) column to a table; nothing on SQLite (its rowid). */
  rid<T extends string, C extends string>(t: CreateTableBuilder<T, C>, primaryKey?: boolean): CreateTableBuilder<T, C>;
  /** Statements of one engine only (the caller says why); none on the other. */
  only(per: Partial<Record<SqlDialect, string>>): string[];
}

interface MigrationSource {
  id: number;
  name: string;
  /** The statements, in order: built with the kit (compiled per dialect) or SQL text. */
  up(k: SchemaKit): Array<Compilable | string>;
}

const MIGRATIONS: MigrationSource[] = [
  {
    id: 1,
    name: 'runs, steps, answers, notes, code, kernel cells, run events',
    up: (k) => [
      k.rid(
        k.schema
          .createTable('runs')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('suite', 'text', (c) => c.notNull())
          .addColumn('block_id', 'text', (c) => c.notNull())
          .addColumn('agent', 'text', (c) => c.notNull())
          .addColumn('model', 'text')
          .addColumn('params', 'text', (c) => c.notNull()) // JSON RunParams (never holds the API key)
          .addColumn('prompt_hash', 'text', (c) => c.notNull())
          .addColumn('tool_set', 'text', (c) => c.notNull())
          .addColumn('data_checksums', 'text', (c) => c.notNull()) // JSON { path: sha256 }
          .addColumn('loupe_version', 'text', (c) => c.notNull())
          .addColumn('sandbox', 'text', (c) => c.notNull())
          .addColumn('workspace', 'text', (c) => c.notNull())
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('status_reason', 'text')
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('started_at', 'text')
          .addColumn('ended_at', 'text')
          .addColumn('duration_ms', k.bigint, (c) => c.notNull().defaultTo(0))
          .addColumn('steps', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('tokens_input', k.bigint, (c) => c.notNull().defaultTo(0))
          .addColumn('tokens_output', k.bigint, (c) => c.notNull().defaultTo(0))
          .addColumn('tokens_cached', k.bigint, (c) => c.notNull().defaultTo(0))
          .addColumn('cost_usd', k.float)
          .addColumn('state', 'text'),
      ), // JSON RunState.extra / notes / code snapshot after the last step
      k.schema.createIndex('runs_block').on('runs').columns(['suite', 'block_id']),
      k
        .rid(
          k.schema
            .createTable('steps')
            .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
            .addColumn('idx', 'integer', (c) => c.notNull())
            .addColumn('started_at', 'text', (c) => c.notNull())
            .addColumn('ended_at', 'text', (c) => c.notNull())
            .addColumn('latency_ms', k.float, (c) => c.notNull())
            .addColumn('tool_ms', k.float, (c) => c.notNull())
            .addColumn('assistant', 'text', (c) => c.notNull()) // JSON AssistantMessage
            .addColumn('tool_calls', 'text', (c) => c.notNull()) // JSON ToolCallRecord[]
            .addColumn('extra_messages', 'text', (c) => c.notNull()) // JSON ChatMessage[]
            .addColumn('tokens_input', k.bigint, (c) => c.notNull())
            .addColumn('tokens_output', k.bigint, (c) => c.notNull())
            .addColumn('tokens_cached', k.bigint, (c) => c.notNull())
            .addColumn('cost_usd', k.float)
            .addColumn('finish_reason', 'text')
            .addColumn('seq', k.bigint, (c) => c.notNull()),
        ) // global insertion order (for subscribers)
        .addPrimaryKeyConstraint('steps_pkey', ['run_id', 'idx']),
      k.schema.createIndex('steps_seq').on('steps').column('seq'),
      k
        .rid(
          k.schema
            .createTable('answers')
            .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
            .addColumn('query_id', 'text', (c) => c.notNull())
            .addColumn('answer', 'text', (c) => c.notNull()) // JSON number | number[]
            .addColumn('raw', 'text', (c) => c.notNull())
            .addColumn('step_idx', 'integer', (c) => c.notNull()),
        )
        .addPrimaryKeyConstraint('answers_pkey', ['run_id', 'query_id']),
      k
        .rid(
          k.schema
            .createTable('notes')
            .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
            .addColumn('idx', 'integer', (c) => c.notNull()) // 0-based position
            .addColumn('content', 'text', (c) => c.notNull()),
        )
        .addPrimaryKeyConstraint('notes_pkey', ['run_id', 'idx']),
      k
        .rid(
          k.schema
            .createTable('saved_code')
            .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
            .addColumn('step_idx', 'integer', (c) => c.notNull())
            .addColumn('code', 'text', (c) => c.notNull()),
        )
        .addPrimaryKeyConstraint('saved_code_pkey', ['run_id', 'step_idx']),
      k
        .rid(
          k.schema
            .createTable('kernel_cells')
            .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
            .addColumn('seq', 'integer', (c) => c.notNull())
            .addColumn('step_idx', 'integer', (c) => c.notNull())
            .addColumn('code', 'text', (c) => c.notNull())
            .addColumn('status', 'text', (c) => c.notNull())
            .addColumn('stdout', 'text', (c) => c.notNull())
            .addColumn('stderr', 'text', (c) => c.notNull())
            .addColumn('result', 'text')
            .addColumn('error', 'text') // JSON
            .addColumn('tables', 'text', (c) => c.notNull()) // JSON
            .addColumn('duration_ms', k.float, (c) => c.notNull())
            .addColumn('replay', 'integer', (c) => c.notNull().defaultTo(0)),
        )
        .addPrimaryKeyConstraint('kernel_cells_pkey', ['run_id', 'seq']),
      k
        .rid(
          k.schema
            .createTable('cell_figures')
            .addColumn('run_id', 'text', (c) => c.notNull())
            .addColumn('cell_seq', 'integer', (c) => c.notNull())
            .addColumn('idx', 'integer', (c) => c.notNull())
            .addColumn('png', k.bytes, (c) => c.notNull()),
        )
        .addPrimaryKeyConstraint('cell_figures_pkey', ['run_id', 'cell_seq', 'idx'])
        .addForeignKeyConstraint(
          'cell_figures_run_id_cell_seq_fkey',
          ['run_id', 'cell_seq'],
          'kernel_cells',
          ['run_id', 'seq'],
          (f) => f.onDelete('cascade'),
        ),
      k.rid(
        k.schema
          .createTable('run_events')
          .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
          .addColumn('at', 'text', (c) => c.notNull())
          .addColumn('kind', 'text', (c) => c.notNull())
          .addColumn('message', 'text', (c) => c.notNull()),
        true,
      ),
      k.schema.createIndex('run_events_run').on('run_events').column('run_id'),
    ],
  },
  {
    id: 2,
    name: 'evaluation: judgements (LLM / human / exact) and scores',
    up: (k) => [
      k.rid(
        k.schema
          .createTable('judgements')
          .addColumn('cache_key', 'text', (c) => c.primaryKey()) // hash of judge id + task + prompt (LLM) or input (human)
          .addColumn('judge_id', 'text', (c) => c.notNull()) // llm:<model> | human | exact | none | ...
          .addColumn('task', 'text', (c) => c.notNull()) // semantic-match | checklist-support | checklist-score | ...
          .addColumn('input_hash', 'text', (c) => c.notNull())
          .addColumn('prompt_hash', 'text')
          .addColumn('input', 'text', (c) => c.notNull()) // JSON
          .addColumn('raw_output', 'text')
          .addColumn('verdict', 'text') // JSON, NULL while pending / on error
          .addColumn('status', 'text', (c) => c.notNull()) // done | pending | error
          .addColumn('error', 'text')
          .addColumn('run_id', 'text') // first run that asked (no FK: judgements outlive runs)
          .addColumn('item_ref', 'text')
          .addColumn('annotator', 'text')
          .addColumn('judged_at', 'text', (c) => c.notNull()),
      ),
      k.schema.createIndex('judgements_pending').on('judgements').columns(['status', 'task']),
      k.schema.createIndex('judgements_run').on('judgements').column('run_id'),
      k.schema.createIndex('judgements_input').on('judgements').column('input_hash'),
      // no rid on PostgreSQL (as main d84c5fa created it): scores are read by key, never in insertion order
      k.schema
        .createTable('scores')
        .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
        .addColumn('benchmark', 'text', (c) => c.notNull())
        .addColumn('judge_id', 'text', (c) => c.notNull())
        .addColumn('options', 'text', (c) => c.notNull()) // JSON, keys sorted
        .addColumn('summary', 'text', (c) => c.notNull()) // JSON headline metrics
        .addColumn('detail', 'text', (c) => c.notNull()) // JSON full score
        .addColumn('pending', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('scored_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('scores_pkey', ['run_id', 'judge_id', 'options']),
    ],
  },
  {
    id: 3,
    name: 'kernel_cells.restarted: the kernel lost its state during this cell (replay starts after it)',
    up: (k) => [k.schema.alterTable('kernel_cells').addColumn('restarted', 'integer', (c) => c.notNull().defaultTo(0))],
  },
  {
    id: 4,
    name: 'runs.owner_pid and runs.heartbeat_at: which process drives a running run (stale runs after a kill)',
    up: (k) => [
      k.schema.alterTable('runs').addColumn('owner_pid', 'integer'),
      k.schema.alterTable('runs').addColumn('heartbeat_at', 'text'),
    ],
  },
  {
    id: 5,
    name: 'run lease: one owner per run (owner id, host, expiry), taken by one conditional update',
    up: (k) =>
      ['lease_owner', 'lease_host', 'lease_expires_at'].map((c) => k.schema.alterTable('runs').addColumn(c, 'text')),
  },
  {
    id: 6,
    name: 'annotation model: items (any subject), append-only annotations, queues, reservations; human verdicts of judgements migrate',
    up: (k) => [
      k.rid(
        k.schema
          .createTable('annotation_items')
          .addColumn('id', 'text', (c) => c.primaryKey()) // 'j:<task>:<input hash>' for judgement subjects; '<kind>:<hash>' otherwise
          .addColumn('subject_kind', 'text', (c) => c.notNull()) // judgement | step | span | run-pair | blade-decision
          .addColumn('subject', 'text', (c) => c.notNull()) // JSON Subject
          .addColumn('task', 'text', (c) => c.notNull()) // verdict schema: a judge task name, or another item kind
          .addColumn('schema_version', 'text', (c) => c.notNull()) // hash of the verdict schema
          .addColumn('input', 'text', (c) => c.notNull()) // JSON: what is judged (the judge input for judgement subjects)
          .addColumn('input_hash', 'text')
          .addColumn('criterion', 'text') // the criterion / checklist item, for filters and per-criterion agreement
          .addColumn('suite', 'text')
          .addColumn('run_id', 'text') // no FK: annotations outlive runs (shown as orphaned)
          .addColumn('item_ref', 'text')
          .addColumn('suite_version', 'text', (c) => c.notNull().defaultTo('unknown'))
          .addColumn('created_at', 'text', (c) => c.notNull()),
      ),
      k.schema.createIndex('annotation_items_task').on('annotation_items').columns(['task', 'criterion']),
      k.schema.createIndex('annotation_items_run').on('annotation_items').column('run_id'),
      k.rid(
        k.schema
          .createTable('annotations')
          .addColumn('id', 'text', (c) => c.primaryKey()) // uuid; import is idempotent by it
          .addColumn('item_id', 'text', (c) => c.notNull())
          .addColumn('annotator', 'text', (c) => c.notNull())
          .addColumn('role', 'text', (c) => c.notNull()) // annotator | adjudicator
          .addColumn('verdict', 'text', (c) => c.notNull()) // JSON, valid for the item's schema
          .addColumn('evidence', 'text', (c) => c.notNull().defaultTo('[]'))
          .addColumn('note', 'text')
          .addColumn('supersedes', 'text') // id of the annotation this one edits
          .addColumn('final', 'integer', (c) => c.notNull().defaultTo(0)) // 1: an adjudicated verdict
          .addColumn('origin', 'text', (c) => c.notNull()) // panel | cli | import | migrated
          .addColumn('created_at', 'text', (c) => c.notNull()),
      ),
      k.schema.createIndex('annotations_item').on('annotations').columns(['item_id', 'created_at']),
      k.schema.createIndex('annotations_annotator').on('annotations').columns(['annotator', 'item_id']),
      k.rid(
        k.schema
          .createTable('annotation_queues')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('kind', 'text', (c) => c.notNull()) // items | audit | disagreement
          .addColumn('spec', 'text', (c) => c.notNull()) // JSON QueueSpec
          .addColumn('reviewers', 'integer', (c) => c.notNull().defaultTo(1))
          .addColumn('reservation_ms', 'integer', (c) => c.notNull().defaultTo(1_800_000))
          .addColumn('blind', 'integer', (c) => c.notNull().defaultTo(1))
          .addColumn('created_at', 'text', (c) => c.notNull()),
      ),
      k
        .rid(
          k.schema
            .createTable('annotation_queue_items')
            .addColumn('queue_id', 'text', (c) => c.notNull().references('annotation_queues.id').onDelete('cascade'))
            .addColumn('pos', 'integer', (c) => c.notNull())
            .addColumn('item_id', 'text', (c) => c.notNull()),
        )
        .addPrimaryKeyConstraint('annotation_queue_items_pkey', ['queue_id', 'pos']),
      k.schema
        .createIndex('annotation_queue_items_item')
        .unique()
        .on('annotation_queue_items')
        .columns(['queue_id', 'item_id']),
      k
        .rid(
          k.schema
            .createTable('annotation_reservations')
            .addColumn('queue_id', 'text', (c) => c.notNull())
            .addColumn('item_id', 'text', (c) => c.notNull())
            .addColumn('annotator', 'text', (c) => c.notNull())
            .addColumn('expires_at', 'text', (c) => c.notNull()),
        )
        .addPrimaryKeyConstraint('annotation_reservations_pkey', ['queue_id', 'item_id', 'annotator']),
      // an annotator's unsubmitted choice on a queue item (survives a reload)
      k
        .rid(
          k.schema
            .createTable('annotation_drafts')
            .addColumn('queue_id', 'text', (c) => c.notNull())
            .addColumn('item_id', 'text', (c) => c.notNull())
            .addColumn('annotator', 'text', (c) => c.notNull())
            .addColumn('draft', 'text', (c) => c.notNull()) // JSON { choice, note, evidence }
            .addColumn('updated_at', 'text', (c) => c.notNull()),
        )
        .addPrimaryKeyConstraint('annotation_drafts_pkey', ['queue_id', 'item_id', 'annotator']),
      // Human verdicts stored before this migration (one row per input hash in judgements) become annotations.
      `INSERT INTO annotations (id, item_id, annotator, role, verdict, evidence, note, supersedes, final, origin, created_at)
  SELECT 'migrated:' || cache_key, 'j:' || task || ':' || input_hash, COALESCE(annotator, 'unknown'), 'annotator', verdict, '[]',
    raw_output, NULL, 0, 'migrated', judged_at
  FROM judgements WHERE judge_id = 'human' AND status = 'done' AND verdict IS NOT NULL`,
    ],
  },
  {
    id: 7,
    name: 'checklist versions (issue 15): expert-authored checklists of a block, one immutable snapshot per version',
    up: (k) => [
      k
        .rid(
          k.schema
            .createTable('checklist_versions')
            .addColumn('suite_id', 'text', (c) => c.notNull()) // Suite.id (kind and scenario/root name)
            .addColumn('block_id', 'text', (c) => c.notNull())
            .addColumn('suite', 'text', (c) => c.notNull()) // benchmark kind
            .addColumn('version', 'integer', (c) => c.notNull()) // 1, 2, ... per block
            .addColumn('parent', 'integer') // the version this one was edited from (NULL for the first)
            .addColumn('hash', 'text', (c) => c.notNull()) // sha256 of the canonical content of the items
            .addColumn('items', 'text', (c) => c.notNull()) // JSON AuthoredChecklistItem[] (retired items kept, marked)
            .addColumn('author', 'text', (c) => c.notNull())
            .addColumn('created_at', 'text', (c) => c.notNull())
            .addColumn('note', 'text', (c) => c.notNull().defaultTo('')),
        )
        .addPrimaryKeyConstraint('checklist_versions_pkey', ['suite_id', 'block_id', 'version']),
    ],
  },
  {
    id: 8,
    name: "BLADE ground-truth versions (issue 17): a dataset's annotations.csv, one immutable full text per version",
    up: (k) => [
      k
        .rid(
          k.schema
            .createTable('blade_gt_versions')
            .addColumn('dataset', 'text', (c) => c.notNull()) // BLADE dataset name (affairs, hurricane, ...)
            .addColumn('version', 'integer', (c) => c.notNull()) // 1, 2, ... (0 is the shipped file, never stored)
            .addColumn('parent', 'integer', (c) => c.notNull()) // the version it was edited from (0 = shipped)
            .addColumn('hash', 'text', (c) => c.notNull()) // sha256 of the CSV text (line endings normalised)
            .addColumn('csv', 'text', (c) => c.notNull()) // the whole annotations.csv, BLADE's own columns and JSON shapes
            .addColumn('author', 'text', (c) => c.notNull())
            .addColumn('created_at', 'text', (c) => c.notNull())
            .addColumn('note', 'text', (c) => c.notNull().defaultTo('')),
        )
        .addPrimaryKeyConstraint('blade_gt_versions_pkey', ['dataset', 'version']),
    ],
  },
  {
    id: 9,
    name: 'annotation items from judgements incrementally (issue 23): a sync watermark kept by triggers, indexes for the sync order, the queue filter and unknown suite versions',
    up: (k) => [
      // The lowest judgements rowid the annotation store has not itemised yet; NULL when every judgement is itemised.
      // Triggers lower it on every new judgement (and on a change of task, judge or input hash), whatever writes it,
      // so a sync with nothing new reads one row, and a sync reads only judgements from there on.
      k.schema
        .createTable('annotation_sync')
        .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
        .addColumn('judgements_from', k.bigint),
      `INSERT INTO annotation_sync (id, judgements_from) SELECT 1, MIN(${k.rowid}) FROM judgements`,
      // Trigger languages differ: SQLite's trigger bodies are SQL with NEW.rowid; PostgreSQL runs a plpgsql function.
      ...k.only({
        sqlite: `
CREATE TRIGGER annotation_sync_judgement_insert AFTER INSERT ON judgements BEGIN
  UPDATE annotation_sync SET judgements_from = MIN(COALESCE(judgements_from, NEW.rowid), NEW.rowid) WHERE id = 1;
END;
CREATE TRIGGER annotation_sync_judgement_update AFTER UPDATE OF task, judge_id, input_hash ON judgements BEGIN
  UPDATE annotation_sync SET judgements_from = MIN(COALESCE(judgements_from, NEW.rowid), NEW.rowid) WHERE id = 1;
END`,
        postgres: `
CREATE FUNCTION annotation_sync_lower() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE annotation_sync SET judgements_from = LEAST(COALESCE(judgements_from, NEW.rid), NEW.rid) WHERE id = 1;
  RETURN NEW;
END $$;
CREATE TRIGGER annotation_sync_judgement_insert AFTER INSERT ON judgements FOR EACH ROW EXECUTE FUNCTION annotation_sync_lower();
CREATE TRIGGER annotation_sync_judgement_update AFTER UPDATE OF task, judge_id, input_hash ON judgements FOR EACH ROW EXECUTE FUNCTION annotation_sync_lower()`,
      }),
      // The sync itemises in (judged_at, rowid) order: read from this index, not sorted in a temporary b-tree.
      k.schema.createIndex('judgements_judged').on('judgements').column('judged_at'),
      // "Has a human judgement" (queues of pending items) answered from the index alone; it replaces the
      // input-hash index (same leading column).
      k.schema.createIndex('judgements_item').on('judgements').columns(['input_hash', 'task', 'judge_id']),
      k.schema.dropIndex('judgements_input'),
      // Items still waiting for their run's suite version (the run was missing or had no data checksums).
      k.schema
        .createIndex('annotation_items_unknown_suite')
        .on('annotation_items')
        .column('run_id')
        .where(sql.ref('suite_version'), '=', 'unknown'),
    ],
  },
  {
    id: 12,
    name: 'interventions (issue 20): human steps — hints and corrections an analyst added to a paused run',
    up: (k) => [
      k
        .rid(
          k.schema
            .createTable('interventions')
            .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
            .addColumn('seq', 'integer', (c) => c.notNull()) // 1, 2, ... per run
            .addColumn('before_step', 'integer', (c) => c.notNull()) // 0-based index of the step whose model request first includes it
            .addColumn('at', 'text', (c) => c.notNull())
            .addColumn('who', 'text', (c) => c.notNull())
            .addColumn('kind', 'text', (c) => c.notNull()) // hint | correction
            .addColumn('text', 'text', (c) => c.notNull()),
        )
        .addPrimaryKeyConstraint('interventions_pkey', ['run_id', 'seq']),
    ],
  },
  {
    id: 15,
    name: 'unknown token counts (issue 24): runs and steps of external MCP clients, whose token use Loupe cannot see, read as null (not 0)',
    up: (k) =>
      ['runs', 'steps'].map((t) =>
        k.schema.alterTable(t).addColumn('tokens_known', 'integer', (c) => c.notNull().defaultTo(1)),
      ),
  },
  {
    id: 16,
    name: 'team identity and evidence (issue 26): the database role that wrote each annotation; run artefacts stored content-addressed',
    up: (k) => [
      // The database role that wrote the annotation: PostgreSQL's current_user, filled by the server; NULL on SQLite,
      // which has no roles (and for annotations written before this migration).
      k.schema.alterTable('annotations').addColumn('db_role', 'text'),
      // PostgreSQL only (roles): new rows get the role the writing connection logged in as. A role that does not own
      // the table (an annotator's login) cannot choose the value: the trigger overwrites whatever its client sent. Only
      // the table's owner (the role that migrates the store and runs loupe store copy) may carry a role recorded
      // elsewhere over, so a copy keeps who wrote each annotation.
      ...k.only({
        postgres: `
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
CREATE TRIGGER annotations_db_role BEFORE INSERT OR UPDATE ON annotations FOR EACH ROW EXECUTE FUNCTION annotations_db_role()`,
      }),
      // Evidence a remote annotator needs (reports, figures, files an agent wrote that a score or review reads), kept in
      // the store by content: one row per distinct content (sha256 of the bytes) ...
      k.rid(
        k.schema
          .createTable('artefact_blobs')
          .addColumn('sha256', 'text', (c) => c.primaryKey()) // hex sha256 of bytes
          .addColumn('media_type', 'text', (c) => c.notNull()) // e.g. text/markdown, image/png (from the name it was first stored under)
          .addColumn('size', k.bigint, (c) => c.notNull()) // bytes
          .addColumn('bytes', k.bytes, (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull()),
      ),
      // ... and one row per file of a run: its path relative to the run workspace and the content it held.
      k
        .rid(
          k.schema
            .createTable('run_artefacts')
            .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
            .addColumn('path', 'text', (c) => c.notNull()) // relative to the run workspace, '/' separated
            .addColumn('sha256', 'text', (c) => c.notNull().references('artefact_blobs.sha256'))
            .addColumn('captured_at', 'text', (c) => c.notNull()),
        )
        .addPrimaryKeyConstraint('run_artefacts_pkey', ['run_id', 'path']),
      k.schema.createIndex('run_artefacts_blob').on('run_artefacts').column('sha256'),
    ],
  },
  {
    id: 17,
    name: 'sweeps (issue 27): the sweep a queued run belongs to (blocks × repeats × model profiles run by workers)',
    up: (k) => [
      k.schema.alterTable('runs').addColumn('sweep_id', 'text'),
      k.schema.createIndex('runs_sweep').on('runs').column('sweep_id'),
    ],
  },
  {
    id: 18,
    name: 'expert judgements append-only (issue 39): annotations, checklist and ground-truth versions refuse UPDATE and DELETE; PostgreSQL: roles, blind reading',
    // A correction is a new row (an annotation that supersedes, a new checklist or ground-truth version), never an edit.
    // The engines enforce it differently, so each has its own text: SQLite has no roles (triggers that refuse any
    // change guard against mistakes and tools, not against the file's owner, who can drop them); PostgreSQL refuses
    // per role (the tables' owner may) and adds blind reading by row-level security and views.
    up: (k) =>
      k.only({
        sqlite: `
-- An UPDATE that changes nothing passes (a repeated \`loupe store copy\` upserts the same rows); any change or DELETE is
-- refused.
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
        postgres: `
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
      }),
  },
  {
    id: 19,
    name: 'experiments (issue 43): run tags and names, saved run filters; append-only',
    // A tag, an untag and a rename are rows of one log per run (run_labels); a run's tags and name are what its rows
    // say in insertion order. Saved filters are a log per name (the newest row holds the spec; '' = removed). Both are
    // what colleagues write on the team store, so no row is ever changed or deleted (as annotations, migration 18);
    // rows of a deleted run stay (no foreign key: a cascade would be refused) and are ignored.
    up: (k) => [
      k.rid(
        k.schema
          .createTable('run_labels')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('run_id', 'text', (c) => c.notNull())
          .addColumn('kind', 'text', (c) => c.notNull()) // tag | untag | name
          .addColumn('value', 'text', (c) => c.notNull())
          .addColumn('author', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull()),
      ),
      k.schema.createIndex('run_labels_run').on('run_labels').column('run_id'),
      k.schema.createIndex('run_labels_value').on('run_labels').columns(['kind', 'value']),
      k.rid(
        k.schema
          .createTable('saved_filters')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('spec', 'text', (c) => c.notNull()) // JSON RunFilterSpec, '' when the filter was removed
          .addColumn('author', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull()),
      ),
      k.schema.createIndex('saved_filters_name').on('saved_filters').column('name'),
      ...appendOnly(
        k,
        ['run_labels', 'saved_filters'],
        'experiment labels and saved filters are append-only: a change is a new row',
      ),
    ],
  },
  {
    id: 20,
    name: 'annotation queue instructions and assignment (issue 43); append-only',
    // Instructions are versions per queue (the newest is shown); an assignment is a row per item (the newest says who,
    // '' = nobody). Both append-only: who was asked to label what, and under which rubric, stays on record.
    up: (k) => [
      k
        .rid(
          k.schema
            .createTable('queue_instructions')
            .addColumn('queue_id', 'text', (c) => c.notNull())
            .addColumn('version', 'integer', (c) => c.notNull())
            .addColumn('text', 'text', (c) => c.notNull()) // Markdown written by a colleague: data, rendered sanitised
            .addColumn('author', 'text', (c) => c.notNull())
            .addColumn('created_at', 'text', (c) => c.notNull()),
        )
        .addPrimaryKeyConstraint('queue_instructions_pkey', ['queue_id', 'version']),
      k.rid(
        k.schema
          .createTable('queue_assignments')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('queue_id', 'text', (c) => c.notNull())
          .addColumn('item_id', 'text', (c) => c.notNull())
          .addColumn('annotator', 'text', (c) => c.notNull()) // '' = unassigned
          .addColumn('assigned_by', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull()),
      ),
      k.schema.createIndex('queue_assignments_item').on('queue_assignments').columns(['queue_id', 'item_id']),
      ...appendOnly(
        k,
        ['queue_instructions', 'queue_assignments'],
        'queue instructions and assignments are append-only: a change is a new row',
      ),
    ],
  },
];

/**
 * The append-only guard of tables (as migration 18's): SQLite triggers refusing any UPDATE and DELETE; PostgreSQL
 * triggers calling `loupe_append_only()` (migration 18), which lets only the tables' owner change rows.
 */
function appendOnly(k: SchemaKit, tables: string[], message: string): string[] {
  return k.only({
    sqlite: tables
      .map(
        (
          t,
        ) => `CREATE TRIGGER ${t}_append_only_update BEFORE UPDATE ON ${t} BEGIN SELECT RAISE(ABORT, '${message}'); END;
CREATE TRIGGER ${t}_append_only_delete BEFORE DELETE ON ${t} BEGIN SELECT RAISE(ABORT, '${message}'); END`,
      )
      .join(';\n'),
    postgres: tables
      .map(
        (
          t,
        ) => `CREATE TRIGGER ${t}_append_only BEFORE UPDATE OR DELETE ON ${t} FOR EACH ROW EXECUTE FUNCTION loupe_append_only();
CREATE TRIGGER ${t}_append_only_truncate BEFORE TRUNCATE ON ${t} FOR EACH STATEMENT EXECUTE FUNCTION loupe_append_only()`,
      )
      .join(';\n'),
  });
}

/** A Kysely that only compiles (its driver runs nothing): the schema builder of a dialect. */
export function compilerOf(dialect: SqlDialect): Kysely<unknown> {
  return new Kysely<unknown>({
    dialect:
      dialect === 'sqlite'
        ? {
            createAdapter: () => new SqliteAdapter(),
            createDriver: () => new DummyDriver(),
            createIntrospector: (db) => new SqliteIntrospector(db),
            createQueryCompiler: () => new SqliteQueryCompiler(),
          }
        : {
            createAdapter: () => new PostgresAdapter(),
            createDriver: () => new DummyDriver(),
            createIntrospector: (db) => new PostgresIntrospector(db),
            createQueryCompiler: () => new PostgresQueryCompiler(),
          },
  });
}

function kitOf(dialect: SqlDialect): SchemaKit {
  const pg = dialect === 'postgres';
  return {
    dialect,
    schema: compilerOf(dialect).schema,
    float: pg ? 'double precision' : 'real',
    bytes: pg ? 'bytea' : 'blob',
    bigint: pg ? 'bigint' : 'integer',
    rowid: pg ? 'rid' : 'rowid',
    rid: (t, primaryKey = false) =>
      pg ? t.addColumn('rid', 'bigserial', (c) => (primaryKey ? c.primaryKey() : c.notNull())) : t,
    only: (per) => (per[dialect] === undefined ? [] : [per[dialect]]),
  };
}

/**
 * The run store's migrations rendered in one dialect, in id order.
 * @param dialect `sqlite` (the embedded file) or `postgres` (the team store).
 * @returns each migration's id, name and SQL text (statements separated by `;`), for the engine's runner.
 * @throws Error when a built statement would need bound parameters (DDL text must be self-contained).
 */
export function migrationsFor(dialect: SqlDialect): Migration[] {
  const kit = kitOf(dialect);
  return MIGRATIONS.map((m) => ({
    id: m.id,
    name: m.name,
    sql:
      m
        .up(kit)
        .map((s) => {
          if (typeof s === 'string') return s.trim().replace(/;+$/, '');
          const c = s.compile();
          if (c.parameters.length) {
            throw new Error(`run store migration ${m.id}: a statement has bound parameters (${c.sql})`);
          }
          return c.sql;
        })
        .join(';\n') + ';',
  }));
}

/** The SQLite migrations (the embedded store's runner and tests read this list). */
export const migrations: Migration[] = migrationsFor('sqlite');

/**
 * The PostgreSQL migrations: the same ids and names as {@link migrations}.
 * @param extra migrations of other areas (their SQL must run on PostgreSQL).
 * @returns the list to apply.
 */
export function pgMigrations(extra: Migration[] = []): Migration[] {
  return [...migrationsFor('postgres'), ...extra];
}
