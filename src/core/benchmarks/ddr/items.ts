/**
 * DDR-Bench's part of the common block model (`suites/types.ts`): its item type (one entity to analyse), its block
 * fields and its loader options, added by declaration merging so the generic model names no benchmark (issue 40).
 * Source: spec §3.3.
 */

/** DDR entity task: "Analyze patient 10502319". */
export interface DdrEntityItem {
  type: 'ddr-entity';
  id: string;
  entityId: string;
  /** Start prompt given to the agent (spec §3.3). */
  prompt: string;
}

declare module '../../suites/types.ts' {
  interface BlockItemTypes {
    'ddr-entity': DdrEntityItem;
  }
  interface VisibleResources {
    /** DDR: the read-only SQLite database the agent queries (a file: placed in the workspace, listed by the guard). */
    database?: DatabaseInfo;
  }
  interface HiddenResources {
    /** DDR: the entity's checklist (`qa.json` pairs; reached by generic code through `BenchmarkChecklist.nativeItems`). */
    checklist?: ChecklistItem[];
  }
  interface BlockExtensions {
    /** DDR: scenario, entity and checklist size. */
    ddr?: { entityId: string; entityColumn?: string; checklistCount: number };
  }
  interface LoadSuiteOptions {
    /** DDR: `TABLE.COLUMN` naming where entities come from when the root has no `entity_ids.json`. */
    entities?: string;
    /** DDR: where a CSV folder is imported to (default: a cache file under the OS temp dir keyed by root). */
    database?: string;
    /** DDR: checklist file (default `<root>/qa.json`). */
    checklist?: string;
    /** DDR: folder with `entity_ids.json` / `qa.json` / metadata when the root itself is a database file. */
    metadataDir?: string;
    /** DDR: at most this many tables are imported (tests); default all. */
    tableFilter?: (table: string) => boolean;
  }
}
