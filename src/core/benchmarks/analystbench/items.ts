/**
 * AnalystBench's part of the common block model (`suites/types.ts`): its item type (one report task), its visible
 * and hidden resources, its block fields and its loader option, added by declaration merging so the generic model
 * names no benchmark (issue 40).
 */

/** AnalystBench report task. */
export interface AnalystTaskItem {
  type: 'analyst-task';
  id: string;
  instruction: string;
}

declare module '../../suites/types.ts' {
  interface BlockItemTypes {
    'analyst-task': AnalystTaskItem;
  }
  interface VisibleResources {
    /** AnalystBench: the task instruction. */
    instruction?: string;
    /** AnalystBench: the table of contents (visible in the default input configuration). */
    tableOfContents?: string;
  }
  interface HiddenResources {
    /** AnalystBench: reference report file (absolute path; also in `files`). */
    referenceReport?: string;
    /** AnalystBench: excluded sections / claims of the reference report not derivable from sources. */
    excluded?: string[];
    /** AnalystBench: the task's checklist (reached by generic code through `BenchmarkChecklist.nativeItems`). */
    checklist?: ChecklistItem[];
  }
  interface BlockExtensions {
    /** AnalystBench: manifest file and variant. */
    analyst?: { manifest: string; task: string; variant?: string };
  }
  interface LoadSuiteOptions {
    /** AnalystBench: environment for `${VAR}` in manifests (default `process.env`). */
    env?: Record<string, string | undefined>;
  }
}
