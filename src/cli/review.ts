/**
 * `loupe review`: side-by-side review from the command line — open a pairwise queue over runs, record a vote, run
 * the LLM pairwise judge (both orders), rank players with Bradley–Terry. The same store and rules as the review
 * panel in VS Code. Source: issue 16.
 */
import { parseArgs } from 'node:util';
import { annotationStoreOf, annotatorLabel } from '../core/annotations/index.ts';
import { judgementStoreOf } from '../core/eval/store.ts';
import {
  judgePairs, openPairwiseQueue, pairOf, pairwiseRanking, pairwiseVerdict, PAIRWISE_TASK, VOTE_CHOICES, type PairwiseRanking, type VoteSource,
} from '../core/review/pairwise.ts';
import { criteriaByBlock, pairInstruction, reviewMarkdown, reviewSourceOf } from '../app/review/sources.ts';
import type { Suite } from '../core/suites/types.ts';
import { annotatorId } from '../core/util/annotator.ts';
import { judgeFromArgs } from './score.ts';
import { openExistingStore, runsRootOf, STORE_HELP } from './store-arg.ts';
import { UsageError, type CliCommand, type CliIo } from './types.ts';

const USAGE = `loupe review <pairs|vote|judge|rank> [${STORE_HELP}]
  pairs  [--suite S] [--run ID]... [--block B]... [--criteria "C1,C2,..."] [--reviewers N] [--json]
         creates a pair for every two finished runs of one block (different run profiles; with --run, every two of
         those runs) and opens the pairwise queue; criteria default to the benchmark's (AnalystBench: the block's
         checklist), else Correctness, Completeness, Clarity
  vote   --pair ID --overall A|B|tie|both-bad [--criterion "NAME=CHOICE"]... [--rationale TEXT] [--annotator NAME]
         records a vote (A = the pair's first run id, as listed by pairs); every criterion needs a choice
  judge  --judge-model M --judge-base-url URL [--judge-api-key-env VAR] [--suite S] [--run ID]... [--inconsistent tie|drop]
         the LLM pairwise judge: each pair asked in both orders; an inconsistent choice is a tie (or the pair is dropped)
  rank   [--suite S] [--run ID]... [--criterion NAME] [--source human|llm|all] [--ties half|ignore] [--l2 X]
         [--samples N] [--seed N] [--json]
         Bradley–Terry ratings per run profile (agent + model + parameters) on the Elo-like scale with bootstrap 95% CIs
  The annotator defaults to $LOUPE_ANNOTATOR, else git user.name, else the OS user.`;

const intArg = (v: string | undefined, flag: string): number | undefined => {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError(`${flag} must be a whole number, got '${v}'`);
  return Number(v);
};

/** Text table of a ranking. */
export function rankingLines(r: PairwiseRanking): string[] {
  const out = [`criterion ${r.criterion} · votes from ${r.source} · ${r.votes} battle(s)${r.bothBad.votes ? ` · both bad ${r.bothBad.votes} (${((r.bothBad.rate ?? 0) * 100).toFixed(1)}%)` : ''} · ties ${r.options.ties} · l2 ${r.options.l2} · ${r.options.samples} bootstrap samples`];
  if (!r.rows.length) {
    out.push('no votes yet');
    return out;
  }
  const w = Math.max(6, ...r.rows.map((x) => x.label.length));
  out.push(`${'#'.padStart(2)}  ${'player'.padEnd(w)}  rating   95% CI          battles  wins  ties`);
  r.rows.forEach((x, i) => out.push(`${String(i + 1).padStart(2)}  ${x.label.padEnd(w)}  ${x.rating.toFixed(0).padStart(6)}  [${x.ciLow.toFixed(0)}, ${x.ciHigh.toFixed(0)}]`.padEnd(w + 34) + `${String(x.battles).padStart(7)}  ${String(x.wins).padStart(4)}  ${String(x.ties).padStart(4)}`));
  if (r.reviewers.length) out.push(`reviewers: ${r.reviewers.map((x) => `${x.label} ${x.votes} vote(s)`).join(', ')}`);
  if (r.judgeHuman) out.push(`LLM judge vs human resolution: ${r.judgeHuman.items} pair(s), agreement ${r.judgeHuman.agreement?.toFixed(3) ?? '—'}, κ ${r.judgeHuman.kappa?.toFixed(3) ?? '—'}`);
  if (r.positionConsistency) out.push(`LLM position consistency: ${r.positionConsistency.consistent}/${r.positionConsistency.pairs}`);
  return out;
}

async function review(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (!sub || sub === '--help') throw new UsageError('give a subcommand: pairs, vote, judge or rank');
  const { values } = parseArgs({
    args: rest,
    options: {
      store: { type: 'string' }, suite: { type: 'string' }, run: { type: 'string', multiple: true }, block: { type: 'string', multiple: true }, criteria: { type: 'string' }, reviewers: { type: 'string' }, json: { type: 'boolean' },
      pair: { type: 'string' }, overall: { type: 'string' }, criterion: { type: 'string', multiple: true }, rationale: { type: 'string' }, annotator: { type: 'string' },
      judge: { type: 'string' }, 'judge-model': { type: 'string' }, 'judge-base-url': { type: 'string' }, 'judge-api-key-env': { type: 'string' }, inconsistent: { type: 'string' },
      source: { type: 'string' }, ties: { type: 'string' }, l2: { type: 'string' }, samples: { type: 'string' }, seed: { type: 'string' },
    },
  });
  const rs = await openExistingStore(io, values.store);
  try {
    const ann = annotationStoreOf(rs);
    const sel = { ...(values.suite ? { suite: values.suite } : {}), ...(values.run?.length ? { runIds: values.run } : {}), ...(values.block?.length ? { blockIds: values.block } : {}) };
    const suites = new Map<string, Promise<Suite>>();
    switch (sub) {
      case 'pairs': {
        const rubric = values.criteria ? values.criteria.split(',').map((s) => s.trim()).filter(Boolean) : [];
        if (values.criteria !== undefined && !rubric.length) throw new UsageError('--criteria names no criterion');
        const reviewers = intArg(values.reviewers, '--reviewers');
        const criteriaOf = criteriaByBlock({ rubric, suites });
        const res = await openPairwiseQueue(ann, rs, sel, criteriaOf, reviewers !== undefined ? { reviewers } : {});
        if (values.json) io.out(JSON.stringify({ queue: res.queue, pairs: res.items.map((i) => ({ id: i.id, ...pairOf(i) })), skipped: res.skipped }, null, 1) + '\n');
        else {
          io.out(`${res.queue.id}  ${res.queue.name}\n`);
          for (const i of res.items) { const p = pairOf(i); io.out(`  ${i.id}  ${p.blockId}  A ${p.runA}  B ${p.runB}  (${p.criteria.length} criteria)\n`); }
          for (const s of res.skipped) io.out(`  skipped ${s.runId}: ${s.reason}\n`);
        }
        return 0;
      }
      case 'vote': {
        if (!values.pair) throw new UsageError('--pair ID is required (see loupe review pairs)');
        const item = await ann.getItem(values.pair);
        if (!item || item.task !== PAIRWISE_TASK) throw new UsageError(`--pair ${values.pair}: no such pair in this store (see loupe review pairs)`);
        const p = pairOf(item);
        const choices: Record<string, string> = {};
        for (const c of values.criterion ?? []) {
          const m = /^(.+)=([^=]+)$/.exec(c);
          if (!m) throw new UsageError(`--criterion ${c}: expected NAME=CHOICE (CHOICE one of ${VOTE_CHOICES.join(', ')})`);
          choices[m[1]!.trim()] = m[2]!.trim();
        }
        const verdict = pairwiseVerdict(p.criteria, choices, values.overall, values.rationale ?? '');
        const a = await ann.annotate({ itemId: item.id, annotator: values.annotator ?? annotatorId(io.env), verdict, origin: 'cli' });
        io.out(values.json ? JSON.stringify({ annotation: a }, null, 1) + '\n' : `recorded ${a.id} by ${annotatorLabel(a.annotator, a.dbRole ? [a.dbRole] : [])}: overall ${verdict.overall}\n`);
        return 0;
      }
      case 'judge': {
        const judgeArgs = { judge: values.judge ?? 'llm', 'judge-model': values['judge-model'], 'judge-base-url': values['judge-base-url'], 'judge-api-key-env': values['judge-api-key-env'] };
        if (judgeArgs.judge !== 'llm') throw new UsageError(`--judge must be llm for pairwise judging, got '${judgeArgs.judge}'`);
        const judge = judgeFromArgs(judgeArgs, judgementStoreOf(rs), io.env);
        const inconsistent = values.inconsistent ?? 'tie';
        if (inconsistent !== 'tie' && inconsistent !== 'drop') throw new UsageError(`--inconsistent must be tie or drop, got '${inconsistent}'`);
        let items = await ann.listItems({ task: PAIRWISE_TASK, ...(values.suite ? { suite: values.suite } : {}) });
        if (values.run?.length) items = items.filter((i) => { const p = pairOf(i); return values.run!.includes(p.runA) && values.run!.includes(p.runB); });
        if (!items.length) throw new UsageError('no pairs to judge: open them first with loupe review pairs');
        const res = await judgePairs(rs, judge, items, async (id) => reviewMarkdown((await reviewSourceOf(rs, id, runsRootOf(io, values.store))).source), (p) => pairInstruction(rs, p, suites), { inconsistent });
        if (values.json) io.out(JSON.stringify(res, null, 1) + '\n');
        else {
          io.out(`judged ${res.judged} pair(s) with ${judge.id}; position-consistent ${res.consistent}/${res.judged}${res.judged ? ` (${((res.consistent / res.judged) * 100).toFixed(1)}%)` : ''}; inconsistent counted as ${inconsistent === 'tie' ? 'a tie' : 'left out'}\n`);
          for (const f of res.failed) io.out(`  not judged ${f.itemId}: ${f.error}\n`);
        }
        return res.failed.length && !res.judged ? 1 : 0;
      }
      case 'rank': {
        const l2 = values.l2 === undefined ? undefined : Number(values.l2);
        if (l2 !== undefined && !(l2 >= 0)) throw new UsageError(`--l2 must be a number ≥ 0, got '${values.l2}'`);
        const samples = intArg(values.samples, '--samples');
        const seed = intArg(values.seed, '--seed');
        const source = (values.source ?? 'human') as VoteSource;
        if (!['human', 'llm', 'all'].includes(source)) throw new UsageError(`--source must be human, llm or all, got '${values.source}'`);
        const ties = values.ties ?? 'half';
        if (ties !== 'half' && ties !== 'ignore') throw new UsageError(`--ties must be half or ignore, got '${ties}'`);
        const r = await pairwiseRanking(ann, rs, {
          ...(values.suite ? { suite: values.suite } : {}), ...(values.run?.length ? { runIds: values.run } : {}), criterion: values.criterion?.[0] ?? 'overall', source, ties,
          ...(l2 !== undefined ? { l2 } : {}), ...(samples !== undefined ? { samples } : {}), ...(seed !== undefined ? { seed } : {}),
        });
        if (values.json) io.out(JSON.stringify(r.rows.map(({ player, agent, model, paramsHash, rating, ciLow, ciHigh, battles, wins, ties: t }) => ({ player, agent, model, paramsHash, rating, ciLow, ciHigh, battles, wins, ties: t })), null, 1) + '\n');
        else io.out(rankingLines(r).join('\n') + '\n');
        return 0;
      }
      default:
        throw new UsageError(`unknown subcommand '${sub}' (pairs, vote, judge, rank)`);
    }
  } finally {
    await rs.close();
  }
}

export const reviewCommand: CliCommand = {
  name: 'review',
  summary: 'side-by-side review: pairwise queues of runs, votes, the LLM pairwise judge, Bradley–Terry ranking',
  usage: USAGE,
  run: review,
};
