/**
 * The declarative (manifest) benchmarks' part of the common block model (`suites/types.ts`): one item type — a question
 * read from the manifest's item file — and the hidden payload (each item's gold answer), added by declaration merging
 * like every benchmark folder's (issue 40). Source: issue 44 ("a benchmark is a folder with a manifest").
 */
import type { Block, HiddenResources } from '../../suites/types.ts';

/** One item of a manifest benchmark, as the agent sees it (never its gold). */
export interface ManifestItem {
  type: 'manifest-item';
  /** The item's id as written in the item file (`0`, `q17`), as text: the key of answers and native outputs. */
  id: string;
  /** The instruction (DABench `question`). */
  instruction: string;
  /** Constraints shown with the instruction ('' when the manifest names no field or the row has none). */
  constraints: string;
  /** The answer format the answer tool accepts (DABench `format`: `@name[value]`), '' when none. */
  answerFormat: string;
  /** Metadata fields named by the manifest (level, concepts, domain), as read (strings, numbers or lists). */
  metadata: Record<string, unknown>;
  /** Workspace-relative paths of the item's own data files (DABench: its table). */
  files: string[];
  /** Where the item was read: `file:line` (JSONL), `file:row` (CSV) or the item's folder. */
  origin: string;
}

/** The gold answer of one item: named sub-answers (DABench `common_answers`) or one value under the name `answer`. */
export interface ManifestGold {
  /** Sub-answers in the gold file's order: name → expected text (numbers are kept as their JSON text). */
  answers: Array<[string, string]>;
}

/** What a manifest block is scored against: each item's gold, by item id. */
export interface ManifestHidden extends HiddenResources {
  gold: Record<string, ManifestGold>;
}

/** A manifest block: the generic block with the manifest item and gold. */
export type ManifestBlock = Block<ManifestItem, ManifestHidden>;

declare module '../../suites/types.ts' {
  interface BlockItemTypes {
    'manifest-item': ManifestItem;
  }
}
