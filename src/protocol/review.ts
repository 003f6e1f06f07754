/**
 * Protocol of side-by-side review (issue 16): the review panel (two runs of one block aligned section by section,
 * numbers traced to notebook cells, blind votes per criterion) and the pairwise ranking view (Bradley–Terry ratings
 * with bootstrap CIs, win-rate matrix). Sides are screen sides (`left` / `right`); the host maps them to the pair's
 * runs, so the webview never knows which run is which until the vote is in.
 */
import { IpcNotification, IpcRequest } from './ipc.ts';
import type { ForkDiffView } from './fork-diff.ts';

/** A choice on the screen. */
export type ScreenChoice = 'left' | 'right' | 'tie' | 'both-bad';

/** One side of the pair as shown. */
export interface ReviewSideView {
  /** `Output A` (left) / `Output B` (right): screen names, not the pair's run order. */
  title: string;
  /** The run produced nothing to review ("no report"). */
  empty: boolean;
  /** Filled once the reviewer has voted (blind until then). */
  revealed: { runId: string; agent: string; model: string | null; player: string } | null;
  /** Numbers written / traced to a cell / with no source found. */
  numbers: { total: number; traced: number };
  figures: number;
}

/** One aligned row: the same section of both outputs (either may be missing). */
export interface ReviewRowView {
  key: string;
  left: { title: string; html: string } | null;
  right: { title: string; html: string } | null;
  /** Numbers (ids `L<n>` / `R<n>`) under the same label whose values differ between the sides. */
  differing: string[];
}

/** A number of either side: where it was traced (null = "no source found"). */
export interface ReviewNumberView {
  raw: string;
  label: string;
  /** Notebook cell whose output contains it (0-based seq), or null. */
  cell: number | null;
}

/** The pair on screen. */
export interface PairView {
  itemId: string;
  blockId: string;
  suite: string;
  criteria: string[];
  left: ReviewSideView;
  right: ReviewSideView;
  rows: ReviewRowView[];
  /** By id (`L3`, `R12`). */
  numbers: Record<string, ReviewNumberView>;
  /** This reviewer's vote, in screen terms, once given. */
  vote: { criteria: Record<string, ScreenChoice>; overall: ScreenChoice; rationale: string } | null;
  /** The rule a number is traced by (shown in the legend). */
  traceRule: string;
  /**
   * When the two runs are a fork and its parent (or two forks of one step): the fork diff (issue 43), beside the vote.
   * `view` is filled once this reviewer has voted (the diff names parent and fork and shows scores: blind until then);
   * null when the pair is not related by a fork.
   */
  forkDiff: { view: ForkDiffView | null; relation: 'parent-fork' | 'sibling-forks'; forkStep: number } | null;
  /**
   * Ground truth per question beside each side (issue 43, opt-in): `after-vote` in a blind queue before this reviewer
   * voted (nothing is sent until then), `available` once voted or in a queue that is not blind, `none` when the
   * benchmark scores no per-item outcomes.
   */
  groundTruth: 'after-vote' | 'available' | 'none';
}

/** One question's ground truth beside each side: what each output answered (from its run's stored score) and the expected value. */
export interface PairQuestionTruth {
  ref: string;
  question: string;
  expected: string;
  /** Null when that side's run has no stored score (or none for this question). */
  left: { given: string; verdict: string } | null;
  right: { given: string; verdict: string } | null;
}

/** Queue header. */
export interface ReviewQueueView {
  queueId: string;
  name: string;
  total: number;
  done: number;
  annotator: string;
  reviewers: number;
  /** Pairs voted per reviewer of this queue, each shown with the database role(s) that wrote their votes, e.g. `Ana (role ana_pg)` (team store; the name alone on SQLite). */
  byReviewer: Array<{ label: string; voted: number }>;
}

/** The review panel's state. */
export interface ReviewState {
  queue: ReviewQueueView;
  pair: PairView | null;
  /** Why nothing is shown, or what just happened. */
  message: string | null;
}

/** Webview → host: the next pair for this reviewer (most uncertain first), skipping `skip` when given. */
export const NextPairRequest = new IpcRequest<{ skip?: string }, ReviewState>('review/next');
/** Webview → host: record a vote; the answer reveals the runs. */
export const SubmitVoteRequest = new IpcRequest<
  { itemId: string; criteria: Record<string, ScreenChoice>; overall: ScreenChoice | null; rationale: string },
  ReviewState
>('review/submit');
/** Webview → host: open the notebook cell a number was traced to (`side` of the current pair). */
export const OpenTracedCellRequest = new IpcRequest<{ itemId: string; side: 'left' | 'right'; seq: number }, void>(
  'review/openCell',
);
/**
 * Webview → host: the questions of the pair (`ref` absent: refs and question texts only) or one question's ground truth
 * beside each side (`ref`). Refused in a blind queue before this reviewer's vote.
 */
export const PairGroundTruthRequest = new IpcRequest<
  { itemId: string; ref?: string },
  { questions: Array<{ ref: string; question: string }>; truth: PairQuestionTruth | null }
>('review/groundTruth');
/** Host → webview: queue progress changed elsewhere (another reviewer). */
export const ReviewProgressNotification = new IpcNotification<{ queue: ReviewQueueView }>('review/progress');

/** One row of the ranking table. */
export interface RankingRowView {
  player: string;
  label: string;
  rating: number;
  ciLow: number;
  ciHigh: number;
  battles: number;
  wins: number;
  ties: number;
}

/** The ranking view's state: one criterion, one vote source. */
export interface RankingState {
  title: string;
  /** The benchmark ranked (players of different benchmarks are never compared), and those with votes. */
  suite: string | null;
  suites: string[];
  /** Groups of players never compared with each other (labels); more than one: ratings across groups are not comparable. */
  components: string[][];
  criterion: string;
  source: 'human' | 'llm' | 'all';
  criteria: string[];
  rows: RankingRowView[];
  votes: number;
  bothBad: { votes: number; rate: number | null };
  matrix: { labels: string[]; rate: Array<Array<number | null>>; battles: number[][] };
  judgeHuman: { items: number; agreement: number | null; kappa: number | null } | null;
  positionConsistency: { pairs: number; consistent: number; rate: number | null } | null;
  options: { ties: string; l2: number; samples: number; seed: number; level: number };
  /** The human reviewers whose votes are counted, each shown with the database role(s) that wrote their votes (team store), and their number of votes. */
  reviewers: Array<{ label: string; votes: number }>;
}

/** Webview → host: the ranking under another criterion or vote source. */
export const RankingRequest = new IpcRequest<
  { suite: string | null; criterion: string; source: 'human' | 'llm' | 'all' },
  RankingState
>('ranking/get');

/** Webview → host: run the LLM pairwise judge (profile of `loupe.judge.profile`, both orders) on the benchmark's pairs; the answer is the ranking from its votes. */
export const JudgePairsRequest = new IpcRequest<
  { suite: string | null; criterion: string },
  RankingState & { judged: string }
>('ranking/judgePairs');
