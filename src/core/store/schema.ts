/**
 * The run store's tables as TypeScript types, one interface for both engines (issue 41): what Kysely checks the
 * queries of `sql.ts`'s users against. Columns as `migrations.ts` creates them (after every migration): JSON columns
 * are `string` (the JSON text), 0/1 flags and counters `number`, bytes `Buffer`; `Generated` marks a column the
 * database fills when an insert leaves it out (a default). PostgreSQL's `rid` (SQLite's implicit rowid) is not
 * listed: queries order by it through `StoreSql.rowid`.
 * Source: `migrations.ts` (ids 1..20).
 */
import type { Generated } from 'kysely';

type Text = string;
type Maybe<T> = T | null;

export interface RunsTable {
  id: Text;
  suite: Text;
  block_id: Text;
  agent: Text;
  model: Maybe<Text>;
  params: Text;
  prompt_hash: Text;
  tool_set: Text;
  data_checksums: Text;
  loupe_version: Text;
  sandbox: Text;
  workspace: Text;
  status: Text;
  status_reason: Maybe<Text>;
  created_at: Text;
  started_at: Maybe<Text>;
  ended_at: Maybe<Text>;
  duration_ms: Generated<number>;
  steps: Generated<number>;
  tokens_input: Generated<number>;
  tokens_output: Generated<number>;
  tokens_cached: Generated<number>;
  cost_usd: Maybe<number>;
  state: Maybe<Text>;
  owner_pid: Maybe<number>;
  heartbeat_at: Maybe<Text>;
  lease_owner: Maybe<Text>;
  lease_host: Maybe<Text>;
  lease_expires_at: Maybe<Text>;
  tokens_known: Generated<number>;
  sweep_id: Maybe<Text>;
}

export interface StepsTable {
  run_id: Text;
  idx: number;
  started_at: Text;
  ended_at: Text;
  latency_ms: number;
  tool_ms: number;
  assistant: Text;
  tool_calls: Text;
  extra_messages: Text;
  tokens_input: number;
  tokens_output: number;
  tokens_cached: number;
  cost_usd: Maybe<number>;
  finish_reason: Maybe<Text>;
  seq: number;
  tokens_known: Generated<number>;
}

export interface AnswersTable {
  run_id: Text;
  query_id: Text;
  answer: Text;
  raw: Text;
  step_idx: number;
}
export interface NotesTable {
  run_id: Text;
  idx: number;
  content: Text;
}
export interface SavedCodeTable {
  run_id: Text;
  step_idx: number;
  code: Text;
}
export interface KernelCellsTable {
  run_id: Text;
  seq: number;
  step_idx: number;
  code: Text;
  status: Text;
  stdout: Text;
  stderr: Text;
  result: Maybe<Text>;
  error: Maybe<Text>;
  tables: Text;
  duration_ms: number;
  replay: Generated<number>;
  restarted: Generated<number>;
}
export interface CellFiguresTable {
  run_id: Text;
  cell_seq: number;
  idx: number;
  png: Buffer;
}
export interface RunEventsTable {
  run_id: Text;
  at: Text;
  kind: Text;
  message: Text;
}

export interface JudgementsTable {
  cache_key: Text;
  judge_id: Text;
  task: Text;
  input_hash: Text;
  prompt_hash: Maybe<Text>;
  input: Text;
  raw_output: Maybe<Text>;
  verdict: Maybe<Text>;
  status: Text;
  error: Maybe<Text>;
  run_id: Maybe<Text>;
  item_ref: Maybe<Text>;
  annotator: Maybe<Text>;
  judged_at: Text;
}
export interface ScoresTable {
  run_id: Text;
  benchmark: Text;
  judge_id: Text;
  options: Text;
  summary: Text;
  detail: Text;
  pending: Generated<number>;
  scored_at: Text;
}

export interface AnnotationItemsTable {
  id: Text;
  subject_kind: Text;
  subject: Text;
  task: Text;
  schema_version: Text;
  input: Text;
  input_hash: Maybe<Text>;
  criterion: Maybe<Text>;
  suite: Maybe<Text>;
  run_id: Maybe<Text>;
  item_ref: Maybe<Text>;
  suite_version: Generated<Text>;
  created_at: Text;
}
export interface AnnotationsTable {
  id: Text;
  item_id: Text;
  annotator: Text;
  role: Text;
  verdict: Text;
  evidence: Generated<Text>;
  note: Maybe<Text>;
  supersedes: Maybe<Text>;
  final: Generated<number>;
  origin: Text;
  created_at: Text;
  db_role: Generated<Maybe<Text>>;
}
export interface AnnotationQueuesTable {
  id: Text;
  name: Text;
  kind: Text;
  spec: Text;
  reviewers: Generated<number>;
  reservation_ms: Generated<number>;
  blind: Generated<number>;
  created_at: Text;
}
export interface AnnotationQueueItemsTable {
  queue_id: Text;
  pos: number;
  item_id: Text;
}
export interface AnnotationReservationsTable {
  queue_id: Text;
  item_id: Text;
  annotator: Text;
  expires_at: Text;
}
export interface AnnotationDraftsTable {
  queue_id: Text;
  item_id: Text;
  annotator: Text;
  draft: Text;
  updated_at: Text;
}
export interface AnnotationSyncTable {
  id: number;
  judgements_from: Maybe<number>;
}

export interface ChecklistVersionsTable {
  suite_id: Text;
  block_id: Text;
  suite: Text;
  version: number;
  parent: Maybe<number>;
  hash: Text;
  items: Text;
  author: Text;
  created_at: Text;
  note: Generated<Text>;
}
export interface BladeGtVersionsTable {
  dataset: Text;
  version: number;
  parent: number;
  hash: Text;
  csv: Text;
  author: Text;
  created_at: Text;
  note: Generated<Text>;
}
export interface InterventionsTable {
  run_id: Text;
  seq: number;
  before_step: number;
  at: Text;
  who: Text;
  kind: Text;
  text: Text;
}
export interface ArtefactBlobsTable {
  sha256: Text;
  media_type: Text;
  size: number;
  bytes: Buffer;
  created_at: Text;
}
export interface RunArtefactsTable {
  run_id: Text;
  path: Text;
  sha256: Text;
  captured_at: Text;
}
export interface RunLabelsTable {
  id: Text;
  run_id: Text;
  kind: Text;
  value: Text;
  author: Text;
  created_at: Text;
}
export interface SavedFiltersTable {
  id: Text;
  name: Text;
  spec: Text;
  author: Text;
  created_at: Text;
}
export interface QueueInstructionsTable {
  queue_id: Text;
  version: number;
  text: Text;
  author: Text;
  created_at: Text;
}
export interface QueueAssignmentsTable {
  id: Text;
  queue_id: Text;
  item_id: Text;
  annotator: Text;
  assigned_by: Text;
  created_at: Text;
}
export interface MigrationsTable {
  id: number;
  name: Text;
  applied_at: Text;
}

/** Every table of the run store (both engines). */
export interface Database {
  runs: RunsTable;
  steps: StepsTable;
  answers: AnswersTable;
  notes: NotesTable;
  saved_code: SavedCodeTable;
  kernel_cells: KernelCellsTable;
  cell_figures: CellFiguresTable;
  run_events: RunEventsTable;
  judgements: JudgementsTable;
  scores: ScoresTable;
  annotation_items: AnnotationItemsTable;
  annotations: AnnotationsTable;
  annotation_queues: AnnotationQueuesTable;
  annotation_queue_items: AnnotationQueueItemsTable;
  annotation_reservations: AnnotationReservationsTable;
  annotation_drafts: AnnotationDraftsTable;
  annotation_sync: AnnotationSyncTable;
  checklist_versions: ChecklistVersionsTable;
  blade_gt_versions: BladeGtVersionsTable;
  interventions: InterventionsTable;
  artefact_blobs: ArtefactBlobsTable;
  run_artefacts: RunArtefactsTable;
  migrations: MigrationsTable;
  run_labels: RunLabelsTable;
  saved_filters: SavedFiltersTable;
  queue_instructions: QueueInstructionsTable;
  queue_assignments: QueueAssignmentsTable;
}
