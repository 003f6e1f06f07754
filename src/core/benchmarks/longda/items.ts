/**
 * LongDA's part of the common block model (`suites/types.ts`): its item type (one query of `benchmark.csv`), its
 * hidden payload (ground truth, publications), its block fields and its loader option, added by declaration merging
 * so the generic model names no benchmark (issue 40). Source: spec §2.2; LongTA `main.py`.
 */
import type { Block } from '../../suites/types.ts';

/** LongDA answer structure: a single number, or a list of labelled numbers (spec §2.2). */
export type AnswerStructure = { kind: 'single_number' } | { kind: 'list'; labels: string[]; length: number };

/** LongDA query (one row of `benchmark.csv`). */
export interface LongdaQuery {
  type: 'longda-query';
  /** `q1`, `q2`, ... position in the block (LongTA `main.py`); unique within the block. */
  id: string;
  /** Globally unique: `<blockId>/q<n>`. */
  uid: string;
  /** The LongTA-style q_id `"{survey}_{source}_q{i}"` (spec §2.2). */
  longdaId: string;
  /** `internal_id` column as given. */
  internalId: number;
  question: string;
  answerStructure: AnswerStructure;
  /** `additional_info` ('' when empty; LongTA shows empty as "NA."). */
  additionalInfo: string;
  /** HIDDEN. Ground truth: number, list of numbers, or null when the CSV cell is empty. */
  groundTruth: number | number[] | null;
  /** Raw `answer` cell. HIDDEN. */
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
