/**
 * LongDA's part of the common block model (`suites/types.ts`): its item type (one query of `benchmark.csv`), its
 * hidden payload (ground truth, publications), its block fields and its loader option, added by declaration merging
 * so the generic model names no benchmark (issue 40). Source: spec §2.2; LongTA `main.py`.
 */
import type { Block } from '../../suites/types.ts';

/** LongDA answer structure: a single number, or a list of labelled numbers (spec §2.2). */
export type AnswerStructure = { kind: 'single_number' } | { kind: 'list'; labels: string[]; length: number };

/**
 * The `answer_structure` cell of a query as read (`load.ts` `readLongdaCsv`): a structure, or — only in a LongTA
 * results file scored as it is, whose every row counts — the cell the one parser refused (its structural coverage
 * is 0). A loaded suite skips such rows, so its items always hold an {@link AnswerStructure}.
 */
export type ReadAnswerStructure = AnswerStructure | { kind: 'invalid'; text: string; error: string };

/**
 * LongDA query: one row of `benchmark.csv` (or of a LongTA results file, which has the same columns), the one shape
 * from the loader to the score (issue 40). The suite's items are `LongdaQuery`; a results file's rows are
 * `LongdaQuery<ReadAnswerStructure>`.
 */
export interface LongdaQuery<S extends ReadAnswerStructure = AnswerStructure> {
  type: 'longda-query';
  /** `q1`, `q2`, ... position in the block (LongTA `main.py`); unique within the block. */
  id: string;
  /** Globally unique: `<blockId>/q<n>`. */
  uid: string;
  /** The LongTA-style q_id `"{survey}_{source}_q{i}"` (spec §2.2). */
  longdaId: string;
  /** `survey` column (trimmed). */
  survey: string;
  /** `source` column (trimmed): the publication. */
  source: string;
  /** `internal_id` column as given (its position in the block when empty or not an integer). */
  internalId: number;
  question: string;
  answerStructure: S;
  /** `additional_info` ('' when empty; LongTA shows empty as "NA."). */
  additionalInfo: string;
  /** HIDDEN. Ground truth: number, list of numbers, or null when the CSV cell is empty or not numbers. */
  groundTruth: number | number[] | null;
  /** Raw `answer` cell. HIDDEN. The score normalises this text as LongTA does (`eval.ts`). */
  answerText: string;
  /** 1-based row in benchmark.csv (header = row 1). */
  row: number;
}

/** A LongDA block: its queries. */
export type LongdaBlock = Block<LongdaQuery>;

declare module '../../suites/types.ts' {
  interface BlockItemTypes {
    'longda-query': LongdaQuery;
  }
  interface HiddenResources {
    /** LongDA: ground truth by query id (same values as {@link LongdaQuery.groundTruth}). */
    answers?: Record<string, number | number[] | null>;
    /** LongDA: publication files of this block's survey (absolute paths; also in `files`). */
    publications?: string[];
    /** LongDA: the publication this block was extracted from, when it could be identified (also in `files`). */
    publication?: string;
  }
  interface BlockExtensions {
    /** LongDA: survey acronym and publication title (`source` column). */
    longda?: { survey: string; source: string };
  }
  interface LoadSuiteOptions {
    /** LongDA: publications folder (default `<root>/../publications` when it exists). */
    publications?: string;
  }
}
