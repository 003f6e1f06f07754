/**
 * Side-by-side review as items of the annotation model (issue 16): a pair of runs of one block is a `run-pair`
 * subject under the `pairwise-vote` item kind; a reviewer's vote (A / B / tie / both bad per criterion and overall,
 * with a rationale) is an annotation, so queues, reservations, several reviewers, agreement and export/import are
 * the annotation store's. Players are run profiles (agent + model + parameters hash); ratings come from
 * {@link fitBradleyTerry} with bootstrap CIs; the queue serves the pair whose order is least certain.
 * Source: issue 16; `../shared/spec/annotation.md` ("a pair of runs", "most-uncertain-first for pairs");
 * Chiang et al. 2024 (Chatbot Arena) §4–5 for ratings, CIs and active sampling.
 */
import { canonicalJson, sha256 } from '../eval/judges/judge.ts';
import { cohensKappa } from '../eval/agreement.ts';
import {
  bootstrapBradleyTerry,
  fitBradleyTerry,
  mostUncertainPair,
  winRateMatrix,
  type Battle,
} from '../eval/bradley-terry.ts';
import {
  annotatorLabel,
  currentAnnotations,
  registerItemSchema,
  rolesByAnnotator,
  type Annotation,
  type AnnotationItem,
} from '../annotations/model.ts';
import type { AnnotationStore, QueueEntry } from '../annotations/store.ts';
import { suiteVersionOf } from '../annotations/store.ts';
import type { Judge, PairChoice } from '../eval/judges/types.ts';
import type { RunRecord } from '../store/records.ts';
import type { RunStore } from '../store/types.ts';
import { LoupeInputError } from '../util/errors.ts';

/** The item kind of a side-by-side vote. */
export const PAIRWISE_TASK = 'pairwise-vote';

/** A reviewer's choice on one criterion: run A, run B, a tie, or both bad (recorded, reported as a rate, left out of ratings). */
export type VoteChoice = 'A' | 'B' | 'tie' | 'both-bad';
export const VOTE_CHOICES: readonly VoteChoice[] = ['A', 'B', 'tie', 'both-bad'];

/** The verdict of a pairwise vote, always in terms of the subject's runs (A = `runA`), whatever side was shown left. */
export interface PairwiseVerdict {
  overall: VoteChoice;
  criteria: Array<{ criterion: string; choice: VoteChoice }>;
  rationale: string;
  /** Which run the reviewer saw on the left (blind sides are randomised per pair and reviewer). */
  shownLeft?: 'A' | 'B';
  /** LLM verdicts: whether both presentation orders agreed (overall). */
  consistent?: boolean;
}

/** What a pair item judges: two runs of one block and the criteria voted. */
export interface PairInput {
  blockId: string;
  suite: string;
  runA: string;
  runB: string;
  criteria: string[];
}

const choiceSchema = { type: 'string' as const, enum: VOTE_CHOICES };
registerItemSchema(
  PAIRWISE_TASK,
  {
    type: 'object',
    required: ['overall', 'criteria', 'rationale'],
    properties: {
      overall: choiceSchema,
      criteria: {
        type: 'array',
        items: {
          type: 'object',
          required: ['criterion', 'choice'],
          properties: { criterion: { type: 'string' }, choice: choiceSchema },
        },
      },
      rationale: { type: 'string' },
      shownLeft: { type: 'string', enum: ['A', 'B'] },
      consistent: { type: 'boolean' },
    },
  },
  (v) => (v as PairwiseVerdict).overall,
  (v) => Object.fromEntries((v as PairwiseVerdict).criteria.map((c) => [c.criterion, c.choice])),
);

/** The rubric used when neither the setting nor the benchmark names criteria. */
export const DEFAULT_RUBRIC: readonly string[] = ['Correctness', 'Completeness', 'Clarity'];

/**
 * A run profile, the player of the ratings: agent + model + a hash of the parameters that change behaviour
 * (temperature, token and budget limits, reasoning effort, tool-set options, the block-independent prompt — system
 * prompt and tool specifications — and the tool set). Blocks, repeats, paths,
 * timeouts and prices are not part of it, so repeats of one configuration are one player and two temperatures of
 * one model are two.
 */
export interface Player {
  /** `agent · model · paramsHash` */
  player: string;
  agent: string;
  model: string | null;
  /** 8 hex. */
  paramsHash: string;
  /** Short display name: the model (or agent) with the parameters that differ from defaults. */
  label: string;
}

/**
 * The player (run profile) of a run. @param run a stored run. @returns its profile; pure.
 * Source: issue 16 "a player is a run profile (agent + model + parameters hash)".
 */
export function playerOf(run: Pick<RunRecord, 'agent' | 'model' | 'params' | 'promptHash' | 'toolSet'>): Player {
  const p = run.params ?? {};
  const behaviour = {
    temperature: p.temperature ?? null,
    maxTokens: p.maxTokens ?? null,
    reasoningEffort: p.reasoningEffort ?? null,
    maxSteps: p.maxSteps ?? null,
    maxWallMs: p.maxWallMs ?? null,
    maxTotalTokens: p.maxTotalTokens ?? null,
    maxCostUsd: p.maxCostUsd ?? null,
    // The block-independent prompt (system prompt + tool specs), never the run's own promptHash: that one covers the
    // block's task prompt too, so it differs per block and split one configuration into a profile per block. Runs
    // recorded before `agentPromptHash` existed have none (null): their profile is agent + model + the other parameters.
    maxObservationChars: p.maxObservationChars ?? null,
    toolSetOptions: p.toolSetOptions ?? {},
    agentPromptHash: p.agentPromptHash ?? null,
    toolSet: run.toolSet,
  };
  const paramsHash = sha256(canonicalJson(behaviour)).slice(0, 8);
  const model = run.model ?? p.model ?? null;
  const extras = [
    p.temperature !== undefined ? `T=${p.temperature}` : '',
    p.reasoningEffort ? `effort ${p.reasoningEffort}` : '',
  ].filter(Boolean);
  const label = `${model ?? run.agent}${model && run.agent !== 'llm' ? ` (${run.agent})` : ''}${extras.length ? ` · ${extras.join(', ')}` : ''}`;
  return { player: `${run.agent} · ${model ?? '-'} · ${paramsHash}`, agent: run.agent, model, paramsHash, label };
}

/** A run's profile as listings show it: its player, a label that tells profiles apart, its repeat index. */
export interface RunProfile {
  player: Player;
  /** {@link Player.label}, with ` · #<paramsHash>` when another profile among the runs given has the same label. */
  label: string;
  /** 1-based index of the run among the runs of its profile on its block (ordered by creation time, then id). */
  repeat: number;
  /** How many runs of its profile on its block there are. */
  repeats: number;
}

/**
 * Profiles and repeat indices of runs (issue 42: the drill-down, Results and the Runs view split and number runs by
 * the one definition of a profile, {@link playerOf}, the Bradley–Terry player).
 * @param runs stored runs (any benchmarks and blocks). @returns run id → its profile; pure.
 */
export function runProfiles(
  runs: ReadonlyArray<
    Pick<RunRecord, 'id' | 'suite' | 'blockId' | 'createdAt' | 'agent' | 'model' | 'params' | 'promptHash' | 'toolSet'>
  >,
): Map<string, RunProfile> {
  const players = new Map(runs.map((r) => [r.id, playerOf(r)]));
  const labels = new Map<string, Set<string>>();
  for (const p of players.values()) labels.set(p.label, (labels.get(p.label) ?? new Set()).add(p.player));
  const groups = new Map<string, (typeof runs)[number][]>();
  for (const r of runs) {
    const k = `${r.suite}\u0000${r.blockId}\u0000${players.get(r.id)!.player}`;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  const out = new Map<string, RunProfile>();
  for (const g of groups.values()) {
    g.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    g.forEach((r, i) => {
      const p = players.get(r.id)!;
      out.set(r.id, {
        player: p,
        label: labels.get(p.label)!.size > 1 ? `${p.label} · #${p.paramsHash}` : p.label,
        repeat: i + 1,
        repeats: g.length,
      });
    });
  }
  return out;
}

/** Id of the item of a pair (runs in canonical order). */
export function pairItemId(blockId: string, runA: string, runB: string): string {
  const [a, b] = [runA, runB].sort();
  return `p:${sha256(`${blockId}\u0000${a}\u0000${b}`).slice(0, 16)}`;
}

/**
 * Creates (or returns) the item of a pair of runs of one block. Runs are put in canonical order (A = the smaller
 * id) so a pair is one item whichever way it was asked for.
 * @param criteria the criteria voted (a non-empty list of distinct names).
 * @throws LoupeInputError for an unknown run, a run paired with itself, two runs of different blocks (both block
 *   names) or of different benchmarks, or an empty / duplicated criterion list.
 */
export async function ensurePairItem(
  ann: AnnotationStore,
  runs: RunStore,
  runIdA: string,
  runIdB: string,
  criteria: readonly string[],
): Promise<AnnotationItem> {
  if (runIdA === runIdB) {
    throw new LoupeInputError(`run ${runIdA}`, 'cannot be compared with itself; choose two different runs');
  }
  const [ra, rb] = await Promise.all([runs.getRun(runIdA), runs.getRun(runIdB)]);
  if (!ra) throw new LoupeInputError(`run ${runIdA}`, 'is not in the store');
  if (!rb) throw new LoupeInputError(`run ${runIdB}`, 'is not in the store');
  if (ra.suite !== rb.suite || ra.blockId !== rb.blockId) {
    throw new LoupeInputError(
      'the two runs',
      `are of different blocks (${ra.suite} ${ra.blockId} and ${rb.suite} ${rb.blockId}); side-by-side review compares two runs of the same block`,
    );
  }
  const crit = criteria.map((c) => c.trim()).filter(Boolean);
  if (!crit.length) throw new LoupeInputError('review criteria', 'name at least one criterion');
  const dup = crit.find((c, i) => crit.indexOf(c) !== i);
  if (dup) throw new LoupeInputError('review criteria', `'${dup}' is listed twice`);
  const [a, b] = [ra, rb].sort((x, y) => x.id.localeCompare(y.id));
  const id = pairItemId(ra.blockId, a!.id, b!.id);
  const existing = await ann.getItem(id);
  if (existing) return existing;
  const input: PairInput = { blockId: ra.blockId, suite: ra.suite, runA: a!.id, runB: b!.id, criteria: crit };
  return ann.putItem({
    id,
    subject: { kind: 'run-pair', blockId: ra.blockId, runA: a!.id, runB: b!.id },
    task: PAIRWISE_TASK,
    input,
    inputHash: sha256(canonicalJson(input)).slice(0, 32),
    criterion: null,
    suite: ra.suite,
    runId: a!.id,
    itemRef: `${ra.blockId}: ${a!.id} vs ${b!.id}`,
    suiteVersion: suiteVersionOf(JSON.stringify(a!.dataChecksums ?? {})),
  });
}

/** The pair input of a pairwise item. @throws LoupeInputError when the item is not a pairwise vote. */
export function pairOf(item: AnnotationItem): PairInput {
  if (item.task !== PAIRWISE_TASK || item.subject.kind !== 'run-pair') {
    throw new LoupeInputError(`item ${item.id}`, 'is not a side-by-side pair');
  }
  return item.input as PairInput;
}

/** Runs that can be reviewed: finished (or stopped by their budget) with at least one step. */
function reviewable(r: RunRecord): boolean {
  return r.status === 'finished' || r.status === 'budget_exhausted';
}

/**
 * Pairs of runs to review: for each block, every two reviewable runs of different players (with `runIds`, every two
 * of those runs of one block, whatever their players). Deterministic order (block, then run ids).
 * @returns `[runA, runB]` pairs and the runs skipped (not finished, or alone on their block), each with its reason.
 */
export async function candidatePairs(
  runs: RunStore,
  sel: { suite?: string; runIds?: readonly string[]; blockIds?: readonly string[] },
): Promise<{ pairs: Array<[RunRecord, RunRecord]>; skipped: Array<{ runId: string; reason: string }> }> {
  let list: RunRecord[];
  const skipped: Array<{ runId: string; reason: string }> = [];
  if (sel.runIds?.length) {
    list = [];
    for (const id of sel.runIds) {
      const r = await runs.getRun(id);
      if (!r) throw new LoupeInputError(`run ${id}`, 'is not in the store');
      list.push(r);
    }
  } else {
    list = await runs.listRuns(sel.suite ? { suite: sel.suite } : {});
  }
  if (sel.blockIds?.length) list = list.filter((r) => sel.blockIds!.includes(r.blockId));
  const byBlock = new Map<string, RunRecord[]>();
  for (const r of list) {
    if (!reviewable(r)) {
      skipped.push({ runId: r.id, reason: `status ${r.status}` });
      continue;
    }
    const k = `${r.suite}\u0000${r.blockId}`;
    byBlock.set(k, [...(byBlock.get(k) ?? []), r]);
  }
  const pairs: Array<[RunRecord, RunRecord]> = [];
  for (const k of [...byBlock.keys()].sort()) {
    const rs = byBlock.get(k)!.sort((x, y) => x.id.localeCompare(y.id));
    let paired = new Set<string>();
    for (let i = 0; i < rs.length; i++) {
      for (let j = i + 1; j < rs.length; j++) {
        if (!sel.runIds?.length && playerOf(rs[i]!).player === playerOf(rs[j]!).player) continue;
        pairs.push([rs[i]!, rs[j]!]);
        paired = paired.add(rs[i]!.id).add(rs[j]!.id);
      }
    }
    for (const r of rs) {
      if (!paired.has(r.id)) {
        skipped.push({
          runId: r.id,
          reason:
            rs.length === 1
              ? `the only reviewable run of block ${r.blockId}`
              : `every other run of block ${r.blockId} has the same profile`,
        });
      }
    }
  }
  return { pairs, skipped };
}

/**
 * Opens the pairwise review queue over a selection of runs: creates the pair items ({@link candidatePairs}) and the
 * queue of kind `pairs` holding them (served most-uncertain-first by {@link nextPair}).
 * @param criteriaOf the criteria of a block's pairs (the rubric setting, the benchmark's criteria, or the default).
 * @throws LoupeInputError when the selection has no pair to review (with why each run was skipped).
 */
export async function openPairwiseQueue(
  ann: AnnotationStore,
  runs: RunStore,
  sel: { suite?: string; runIds?: readonly string[]; blockIds?: readonly string[] },
  criteriaOf: (run: RunRecord) => readonly string[] | Promise<readonly string[]>,
  opts: { name?: string; reviewers?: number; reservationMs?: number } = {},
): Promise<{
  queue: Awaited<ReturnType<AnnotationStore['openQueue']>>;
  items: AnnotationItem[];
  skipped: Array<{ runId: string; reason: string }>;
}> {
  const { pairs, skipped } = await candidatePairs(runs, sel);
  if (!pairs.length) {
    const why = skipped
      .slice(0, 5)
      .map((s) => `${s.runId}: ${s.reason}`)
      .join('; ');
    throw new LoupeInputError(
      'pairwise review',
      `no two finished runs of one block to compare${why ? ` (${why})` : ''}`,
    );
  }
  const items: AnnotationItem[] = [];
  for (const [a, b] of pairs) items.push(await ensurePairItem(ann, runs, a.id, b.id, await criteriaOf(a)));
  const runIds = [...new Set(pairs.flatMap(([a, b]) => [a.id, b.id]))].sort();
  const queue = await ann.openQueue(
    { kind: 'pairs', runIds, ...(sel.suite ? { suite: sel.suite } : {}) },
    {
      ...opts,
      blind: true,
      name: opts.name ?? `Pairwise review · ${pairs.length} pair${pairs.length === 1 ? '' : 's'}`,
    },
  );
  return { queue, items, skipped };
}

/**
 * Which run a reviewer sees on the left: randomised per pair and per reviewer (a hash of both), so sides carry no
 * information and the same reviewer sees the same layout when they come back. @returns `A` or `B`.
 */
export function leftSideFor(itemId: string, annotator: string): 'A' | 'B' {
  return parseInt(sha256(`${itemId}\u0000${annotator}`).slice(0, 2), 16) % 2 === 0 ? 'A' : 'B';
}

/** The choice a reviewer made on the screen (left / right) in terms of the pair's runs. */
export function choiceFromSides(choice: 'left' | 'right' | 'tie' | 'both-bad', shownLeft: 'A' | 'B'): VoteChoice {
  if (choice === 'tie' || choice === 'both-bad') return choice;
  const isLeft = choice === 'left';
  return isLeft ? shownLeft : shownLeft === 'A' ? 'B' : 'A';
}

/** A choice in terms of the pair's runs → screen terms (`left` / `right`), given which run is on the left. */
export function screenChoice(c: VoteChoice, shownLeft: 'A' | 'B'): 'left' | 'right' | 'tie' | 'both-bad' {
  if (c === 'tie' || c === 'both-bad') return c;
  return c === shownLeft ? 'left' : 'right';
}

/**
 * Checks and builds a verdict from a reviewer's choices.
 * @param criteria the item's criteria; `choices` one choice per criterion (by name) and `overall`.
 * @throws LoupeInputError naming the first criterion without a choice, or an unknown criterion / choice.
 */
export function pairwiseVerdict(
  criteria: readonly string[],
  choices: Readonly<Record<string, string>>,
  overall: string | undefined,
  rationale: string,
  shownLeft?: 'A' | 'B',
): PairwiseVerdict {
  const isChoice = (c: unknown): c is VoteChoice =>
    typeof c === 'string' && (VOTE_CHOICES as readonly string[]).includes(c);
  for (const k of Object.keys(choices)) {
    if (!criteria.includes(k)) {
      throw new LoupeInputError(`criterion '${k}'`, `is not a criterion of this pair (${criteria.join(', ')})`);
    }
  }
  const out: PairwiseVerdict['criteria'] = [];
  for (const c of criteria) {
    const v = choices[c];
    if (v === undefined) {
      throw new LoupeInputError(`criterion '${c}'`, 'choose A, B, tie or both bad before submitting');
    }
    if (!isChoice(v)) throw new LoupeInputError(`criterion '${c}'`, `'${v}' is not one of A, B, tie, both-bad`);
    out.push({ criterion: c, choice: v });
  }
  if (overall === undefined) {
    throw new LoupeInputError('overall preference', 'choose A, B, tie or both bad before submitting');
  }
  if (!isChoice(overall)) {
    throw new LoupeInputError('overall preference', `'${overall}' is not one of A, B, tie, both-bad`);
  }
  return { overall, criteria: out, rationale: rationale ?? '', ...(shownLeft ? { shownLeft } : {}) };
}

/** One vote as a battle of players under one criterion (`overall` or a criterion name); null for both bad / missing. */
function battleOf(v: PairwiseVerdict, criterion: string, pa: string, pb: string): Battle | 'both-bad' | null {
  const c = criterion === 'overall' ? v.overall : v.criteria.find((x) => x.criterion === criterion)?.choice;
  if (!c) return null;
  if (c === 'both-bad') return 'both-bad';
  return { a: pa, b: pb, winner: c === 'A' ? 'a' : c === 'B' ? 'b' : 'tie' };
}

/** Where votes come from: every human's current vote, the LLM pairwise judge, or both. */
export type VoteSource = 'human' | 'llm' | 'all';

/** Votes of pair items, each with its players, in a stable order. */
interface Vote {
  item: AnnotationItem;
  verdict: PairwiseVerdict;
  by: string;
  pa: Player;
  pb: Player;
  /** The human reviewer (display name), absent for the LLM judge. */ reviewer?: string;
}

async function collectVotes(
  ann: AnnotationStore,
  runs: RunStore,
  filter: { suite?: string; runIds?: readonly string[] },
  source: VoteSource,
): Promise<{
  votes: Vote[];
  players: Map<string, Player>;
  items: AnnotationItem[];
  humanByItem: Map<string, Annotation[]>;
  llmByItem: Map<string, { judgeId: string; verdict: unknown }>;
}> {
  const f = { task: PAIRWISE_TASK, ...(filter.suite ? { suite: filter.suite } : {}) };
  let items = await ann.listItems(f);
  if (filter.runIds?.length) {
    const s = new Set(filter.runIds);
    items = items.filter((i) => {
      const p = pairOf(i);
      return s.has(p.runA) && s.has(p.runB);
    });
  }
  const humanByItem = await ann.annotationsByItem(f);
  const llmByItem = await ann.llmVerdicts(f);
  const runCache = new Map<string, RunRecord | undefined>();
  const run = async (id: string) => {
    if (!runCache.has(id)) runCache.set(id, await runs.getRun(id));
    return runCache.get(id);
  };
  const players = new Map<string, Player>();
  const votes: Vote[] = [];
  for (const item of items) {
    const p = pairOf(item);
    const [ra, rb] = [await run(p.runA), await run(p.runB)];
    if (!ra || !rb) continue; // a deleted run leaves its votes in the store but out of the ratings
    const pa = playerOf(ra);
    const pb = playerOf(rb);
    players.set(pa.player, pa);
    players.set(pb.player, pb);
    if (source !== 'llm') {
      const { byAnnotator, final } = currentAnnotations(humanByItem.get(item.id) ?? []);
      if (final) {
        votes.push({
          item,
          verdict: final.verdict as PairwiseVerdict,
          by: `adjudicator:${final.annotator}`,
          pa,
          pb,
          reviewer: final.annotator,
        });
      } else {
        for (const [who, a] of [...byAnnotator.entries()].sort((x, y) => x[0].localeCompare(y[0]))) {
          votes.push({ item, verdict: a.verdict as PairwiseVerdict, by: who, pa, pb, reviewer: who });
        }
      }
    }
    if (source !== 'human') {
      const l = llmByItem.get(item.id);
      if (l) votes.push({ item, verdict: l.verdict as PairwiseVerdict, by: l.judgeId, pa, pb });
    }
  }
  return { votes, players, items, humanByItem, llmByItem };
}

/** One row of the ranking (`loupe review rank --json`). */
export interface RankingRow {
  player: string;
  agent: string;
  model: string | null;
  paramsHash: string;
  label: string;
  /** Elo-like scale: 1000 at the mean log-strength, 400/ln 10 per unit. */
  rating: number;
  ciLow: number;
  ciHigh: number;
  /** Bradley–Terry log-strength (mean 0). */
  logStrength: number;
  battles: number;
  wins: number;
  ties: number;
}

/** The ranking of players under one criterion. */
export interface PairwiseRanking {
  criterion: string;
  source: VoteSource;
  /** Options used (recorded with every ranking). */
  options: { ties: 'half' | 'ignore'; l2: number; samples: number; seed: number; level: number };
  rows: RankingRow[];
  /** Votes counted as battles, and votes "both bad" (left out of the ratings, reported as a rate of all votes). */
  votes: number;
  bothBad: { votes: number; rate: number | null };
  /** Win rate of row player over column player (ties half), null when they never met. */
  matrix: { players: string[]; labels: string[]; rate: Array<Array<number | null>>; battles: number[][] };
  /** Criteria found on the items (for the criterion picker). */
  criteria: string[];
  /** LLM judge against the human resolution of the same pairs (overall choice), when both exist. */
  judgeHuman: { items: number; agreement: number | null; kappa: number | null } | null;
  /** Share of LLM verdicts whose two presentation orders agreed. */
  positionConsistency: { pairs: number; consistent: number; rate: number | null } | null;
  /** Groups of players never compared with each other (directly or through others): ratings across groups are not comparable. One group when every player is connected. */
  components: string[][];
  /**
   * The human reviewers whose votes this ranking counts (battles and "both bad" under the criterion), by name: the
   * database roles that wrote their votes (issue 26 "Identity"; [] on SQLite), the label shown (`Ana (role ana_pg)`,
   * {@link annotatorLabel}) and their number of votes. Empty for the LLM judge's votes alone.
   */
  reviewers: Array<{ annotator: string; roles: string[]; label: string; votes: number }>;
}

/**
 * Ranks players from pairwise votes with Bradley–Terry (log-strengths, mean 0) and bootstrap percentile CIs.
 * @param opts criterion (`overall`, default, or a criterion name), source of votes (default `human`), ties
 *   (`half` default: a tie is half a win), `l2` ridge on log-strengths (default 0.01, keeps a player that won or
 *   lost every battle finite; 0 = plain maximum likelihood), bootstrap samples (default 1000), seed (default 0).
 * @returns rows strongest first; an empty ranking when no vote counts; the human reviewers counted, with their
 *   database roles (`reviewers`).
 * Source: issue 16 "Ranking"; Chatbot Arena (Chiang et al. 2024 §5) for the Elo-like scale and bootstrap.
 */
export async function pairwiseRanking(
  ann: AnnotationStore,
  runs: RunStore,
  opts: {
    suite?: string;
    runIds?: readonly string[];
    criterion?: string;
    source?: VoteSource;
    ties?: 'half' | 'ignore';
    l2?: number;
    samples?: number;
    seed?: number;
  } = {},
): Promise<PairwiseRanking> {
  const criterion = opts.criterion ?? 'overall';
  const source = opts.source ?? 'human';
  if (!['human', 'llm', 'all'].includes(source)) {
    throw new LoupeInputError('vote source', `must be human, llm or all, got '${String(source)}'`);
  }
  const ties = opts.ties ?? 'half';
  if (ties !== 'half' && ties !== 'ignore') {
    throw new LoupeInputError('ties', `must be half or ignore, got '${String(ties)}'`);
  }
  const l2 = opts.l2 ?? 0.01;
  const samples = opts.samples ?? 1000;
  const seed = opts.seed ?? 0;
  const { votes, players, items, humanByItem, llmByItem } = await collectVotes(ann, runs, opts, source);
  const suites = [...new Set(items.map((i) => i.suite ?? ''))].sort();
  if (suites.length > 1) {
    throw new LoupeInputError(
      'pairwise ranking',
      `the votes are on runs of several benchmarks (${suites.join(', ')}), whose players cannot be compared; rank one benchmark at a time`,
    );
  }
  const criteria = [...new Set(items.flatMap((i) => pairOf(i).criteria))];
  if (criterion !== 'overall' && !criteria.includes(criterion)) {
    throw new LoupeInputError(
      `criterion '${criterion}'`,
      `no pair is voted on it (criteria: overall, ${criteria.join(', ') || 'none'})`,
    );
  }
  const battles: Battle[] = [];
  let bothBad = 0;
  const byReviewer = new Map<string, number>();
  for (const v of votes) {
    const b = battleOf(v.verdict, criterion, v.pa.player, v.pb.player);
    if (b === 'both-bad') bothBad++;
    else if (b) battles.push(b);
    if (b && v.reviewer !== undefined) byReviewer.set(v.reviewer, (byReviewer.get(v.reviewer) ?? 0) + 1);
  }
  const roles = rolesByAnnotator(items.flatMap((i) => humanByItem.get(i.id) ?? []));
  const reviewers = [...byReviewer.keys()].sort().map((w) => ({
    annotator: w,
    roles: roles[w] ?? [],
    label: annotatorLabel(w, roles[w]),
    votes: byReviewer.get(w)!,
  }));
  const counted = battles.length;
  const options = { ties, l2, samples, seed, level: 0.95 };
  const stats = new Map<string, { battles: number; wins: number; ties: number }>();
  for (const b of battles) {
    for (const [p, won] of [
      [b.a, b.winner === 'a'],
      [b.b, b.winner === 'b'],
    ] as const) {
      const s = stats.get(p) ?? { battles: 0, wins: 0, ties: 0 };
      s.battles++;
      if (won) s.wins++;
      if (b.winner === 'tie') s.ties++;
      stats.set(p, s);
    }
  }
  let rows: RankingRow[] = [];
  let components: string[][] = [];
  if (battles.length) {
    const boot = bootstrapBradleyTerry(battles, { samples, seed, level: 0.95, ties, l2 });
    components = boot.fit.components;
    rows = boot.fit.players
      .map((p) => {
        const pl = players.get(p)!;
        const s = stats.get(p) ?? { battles: 0, wins: 0, ties: 0 };
        return {
          player: p,
          agent: pl.agent,
          model: pl.model,
          paramsHash: pl.paramsHash,
          label: pl.label,
          rating: boot.fit.elo[p]!,
          ciLow: boot.eloCi[p]!.ciLow,
          ciHigh: boot.eloCi[p]!.ciHigh,
          logStrength: boot.fit.logStrengths[p]!,
          ...s,
        };
      })
      .sort((x, y) => y.rating - x.rating || x.player.localeCompare(y.player));
  }
  const order = rows.map((r) => r.player);
  const m = winRateMatrix(battles, { ties, players: order });
  // judge–human agreement on the overall choice, over pairs having both
  let judgeHuman: PairwiseRanking['judgeHuman'] = null;
  const llmLabels: string[] = [];
  const humanLabels: string[] = [];
  let consistent = 0;
  let judged = 0;
  for (const item of items) {
    const l = llmByItem.get(item.id);
    if (!l) continue;
    judged++;
    if ((l.verdict as PairwiseVerdict).consistent !== false) consistent++;
    const h = humanResolution(humanByItem.get(item.id) ?? []);
    if (h) {
      llmLabels.push((l.verdict as PairwiseVerdict).overall);
      humanLabels.push(h);
    }
  }
  if (llmLabels.length) {
    const k = cohensKappa(llmLabels, humanLabels);
    judgeHuman = { items: llmLabels.length, agreement: k.observed, kappa: Number.isFinite(k.kappa) ? k.kappa : null };
  }
  return {
    criterion,
    source,
    options,
    rows,
    votes: counted,
    bothBad: { votes: bothBad, rate: counted + bothBad ? bothBad / (counted + bothBad) : null },
    matrix: { players: order, labels: order.map((p) => players.get(p)!.label), rate: m.rate, battles: m.battles },
    criteria,
    judgeHuman,
    positionConsistency: judged ? { pairs: judged, consistent, rate: consistent / judged } : null,
    components,
    reviewers,
  };
}

/** The human resolution of a pair's overall choice: adjudicated, else a strict majority of current votes; null otherwise. */
function humanResolution(anns: readonly Annotation[]): string | null {
  const { byAnnotator, final } = currentAnnotations(anns);
  if (final) return (final.verdict as PairwiseVerdict).overall;
  const counts = new Map<string, number>();
  for (const a of byAnnotator.values()) {
    const o = (a.verdict as PairwiseVerdict).overall;
    counts.set(o, (counts.get(o) ?? 0) + 1);
  }
  const ranked = [...counts.entries()].sort((a, b) => b[1] - a[1]);
  if (!ranked.length || (ranked.length > 1 && ranked[0]![1] === ranked[1]![1])) return null;
  return ranked[0]![0];
}

/**
 * Serves the next pair of a `pairs` queue to a reviewer: among the pairs they have not voted on (never a pair twice
 * to one reviewer), with reviewers still wanted and not reserved by someone else, the pair whose players' order is
 * least certain under the current ratings (human overall votes; active sampling as in Chatbot Arena), reserved for them.
 * @returns the entry, or undefined when nothing is left for this reviewer.
 * @throws LoupeInputError for an unknown queue.
 */
export async function nextPair(
  ann: AnnotationStore,
  runs: RunStore,
  queueId: string,
  annotator: string,
  opts: { now?: Date } = {},
): Promise<QueueEntry | undefined> {
  const q = await ann.getQueue(queueId);
  if (!q) throw new LoupeInputError(`queue ${queueId}`, 'no such queue');
  return ann.nextItem(queueId, annotator, {
    ...(opts.now ? { now: opts.now } : {}),
    pick: async (entries) => {
      if (entries.length <= 1) return entries[0];
      const { votes } = await collectVotes(
        ann,
        runs,
        { ...(q.spec.suite ? { suite: q.spec.suite } : {}), ...(q.spec.runIds ? { runIds: q.spec.runIds } : {}) },
        'human',
      );
      const battles: Battle[] = [];
      for (const v of votes) {
        const b = battleOf(v.verdict, 'overall', v.pa.player, v.pb.player);
        if (b && b !== 'both-bad') battles.push(b);
      }
      const runPlayers = new Map<string, string>();
      for (const e of entries) {
        const p = pairOf(e.item);
        for (const id of [p.runA, p.runB]) {
          if (!runPlayers.has(id)) {
            const r = await runs.getRun(id);
            runPlayers.set(id, r ? playerOf(r).player : id);
          }
        }
      }
      const candidates = entries.map((e) => {
        const p = pairOf(e.item);
        return [runPlayers.get(p.runA)!, runPlayers.get(p.runB)!] as [string, string];
      });
      if (!battles.length) return entries[0];
      const fit = fitBradleyTerry(battles, { l2: 0.01 });
      return entries[mostUncertainPair(fit, candidates)];
    },
  });
}

/** What the LLM pairwise judge did over a set of pairs. */
export interface PairJudgeResult {
  judged: number;
  /** Pairs whose two presentation orders gave the same overall choice. */
  consistent: number;
  /** Pairs left unjudged (judge error or pending) with the reason. */
  failed: Array<{ itemId: string; error: string }>;
  /** Option used: an inconsistent criterion (or overall) counts as a tie, or the pair is left out. */
  inconsistent: 'tie' | 'drop';
}

/** `first`/`second` of one presentation order → A/B. */
function fromOrder(c: PairChoice, firstIsA: boolean): VoteChoice {
  if (c === 'tie' || c === 'both-bad') return c;
  return (c === 'first') === firstIsA ? 'A' : 'B';
}

/**
 * The LLM pairwise judge: each pair is asked in both orders (A first, then B first); a criterion whose two answers
 * agree takes that choice, an inconsistent one is a tie (`inconsistent: 'tie'`, default) or the whole pair is left out
 * (`drop`). The combined verdict is recorded as the item's LLM judgement (task `pairwise-vote`, judge id of the
 * judge), where agreement reports and `llm+human` resolution find it; each order's raw judgement is cached by the
 * judge as a `pairwise-report` judgement.
 * @param textOf the output of a run shown to the judge (e.g. its report Markdown; '' when it has none).
 * @param instructionOf the task text of a pair's block.
 * Source: issue 16 "LLM pairwise judge" (both orders, position-consistency rate); Zheng et al. 2023 (MT-Bench §3.3:
 * position bias, swap and count inconsistent as a tie).
 */
export async function judgePairs(
  runs: RunStore,
  judge: Judge,
  items: readonly AnnotationItem[],
  textOf: (runId: string) => Promise<string>,
  instructionOf: (pair: PairInput) => Promise<string>,
  opts: { inconsistent?: 'tie' | 'drop' } = {},
): Promise<PairJudgeResult> {
  const inconsistent = opts.inconsistent ?? 'tie';
  if (inconsistent !== 'tie' && inconsistent !== 'drop') {
    throw new LoupeInputError('inconsistent', `must be tie or drop, got '${String(inconsistent)}'`);
  }
  const out: PairJudgeResult = { judged: 0, consistent: 0, failed: [], inconsistent };
  for (const item of items) {
    const p = pairOf(item);
    const [ta, tb, instruction] = [await textOf(p.runA), await textOf(p.runB), await instructionOf(p)];
    const ctx = { runId: p.runA, itemRef: `pair ${item.id}` };
    const ab = await judge.judge('pairwise-report', { instruction, criteria: p.criteria, first: ta, second: tb }, ctx);
    const ba = await judge.judge('pairwise-report', { instruction, criteria: p.criteria, first: tb, second: ta }, ctx);
    if (ab.status !== 'done' || ba.status !== 'done' || !ab.verdict || !ba.verdict) {
      out.failed.push({
        itemId: item.id,
        error: ab.status !== 'done' ? (ab.error ?? ab.status) : (ba.error ?? ba.status),
      });
      continue;
    }
    const combine = (x: PairChoice | undefined, y: PairChoice | undefined): { choice: VoteChoice; agree: boolean } => {
      const a = x ? fromOrder(x, true) : 'tie';
      const b = y ? fromOrder(y, false) : 'tie';
      return a === b ? { choice: a, agree: true } : { choice: 'tie', agree: false };
    };
    const overall = combine(ab.verdict.overall, ba.verdict.overall);
    const criteria = p.criteria.map((criterion) => ({
      criterion,
      ...combine(
        ab.verdict!.criteria.find((c) => c.criterion === criterion)?.choice,
        ba.verdict!.criteria.find((c) => c.criterion === criterion)?.choice,
      ),
    }));
    const allAgree = overall.agree && criteria.every((c) => c.agree);
    out.judged++;
    if (overall.agree) out.consistent++;
    if (inconsistent === 'drop' && !allAgree) continue;
    const verdict: PairwiseVerdict = {
      overall: overall.choice,
      criteria: criteria.map((c) => ({ criterion: c.criterion, choice: c.choice })),
      rationale: `A first: ${ab.verdict.reason} | B first: ${ba.verdict.reason}`.slice(0, 2000),
      consistent: overall.agree,
    };
    await runs.judgements.put(
      {
        key: sha256(canonicalJson({ judge: judge.id, task: PAIRWISE_TASK, inputHash: item.inputHash, inconsistent })),
        task: PAIRWISE_TASK,
        judgeId: judge.id,
        inputHash: item.inputHash!,
        promptHash: null,
        input: item.input,
        raw: JSON.stringify({ aFirst: ab.verdict, bFirst: ba.verdict }),
        verdict,
        status: 'done',
        at: new Date().toISOString(),
      },
      { runId: p.runA, itemRef: `pair ${item.id}` },
    );
  }
  return out;
}
