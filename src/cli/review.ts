/**
 * `loupe review`: side-by-side review from the command line — open a pairwise queue over runs, record a vote, run
 * the LLM pairwise judge (both orders), rank players with Bradley–Terry. The same store and rules as the review
 * panel in VS Code. Source: issue 16.
 */
import { annotationStoreOf, annotatorLabel } from '../core/annotations/index.ts';
import { judgementStoreOf } from '../core/eval/store.ts';
import {
  judgePairs,
  openPairwiseQueue,
  pairOf,
  pairwiseRanking,
  pairwiseVerdict,
  PAIRWISE_TASK,
  VOTE_CHOICES,
  type PairwiseRanking,
  type VoteSource,
} from '../core/review/pairwise.ts';
import { criteriaByBlock, pairInstruction, reviewMarkdown, reviewSourceOf } from '../app/review/sources.ts';
import type { Suite } from '../core/suites/types.ts';
import { annotatorId } from '../core/util/annotator.ts';
import { judgeFromArgs } from './score.ts';
import { openExistingStore, runsRootOf, STORE_OPTIONS } from './store-arg.ts';
import { UsageError, type CliIo } from './types.ts';
import { JSON_OPTIONS, JUDGE_OPTIONS } from './option-groups.ts';
import { declareCommand, defineCommand, optionGroup, parseCommand } from './options.ts';

const DECL = declareCommand({
  synopsis: 'review <pairs|vote|judge|rank>',
  groups: [
    optionGroup('selection', {
      suite: { type: 'string', value: 'S', help: 'only runs of this benchmark' },
      run: { type: 'string', multiple: true, value: 'ID', help: 'only this run (repeatable)' },
      block: { type: 'string', multiple: true, value: 'B', help: 'only runs of this block (repeatable; pairs)' },
    }),
    optionGroup('pairs', {
      criteria: {
        type: 'string',
        value: '"C1,C2,..."',
        help: "the criteria voted on (default the benchmark's, else Correctness, Completeness, Clarity)",
      },
      reviewers: { type: 'string', value: 'N', help: 'reviewers per pair' },
    }),
    optionGroup('vote', {
      pair: { type: 'string', value: 'ID', help: 'the pair' },
      overall: {
        type: 'string',
        value: 'A|B|tie|both-bad',
        help: "the overall choice (A = the pair's first run id, as listed by pairs)",
      },
      criterion: {
        type: 'string',
        multiple: true,
        value: '"NAME=CHOICE"',
        help: "a criterion's choice (vote, repeatable; every criterion needs one) or the criterion ranked (rank)",
      },
      rationale: { type: 'string', value: 'TEXT', help: 'why' },
      annotator: {
        type: 'string',
        value: 'NAME',
        help: 'who votes (default $LOUPE_ANNOTATOR, else git user.name, else the OS user)',
      },
    }),
    JUDGE_OPTIONS,
    optionGroup('judge pairs', {
      inconsistent: {
        type: 'string',
        value: 'tie|drop',
        help: 'an inconsistent choice over both orders is a tie, or the pair is dropped',
      },
    }),
    optionGroup('rank', {
      source: { type: 'string', value: 'human|llm|all', help: 'whose votes' },
      ties: { type: 'string', value: 'half|ignore', help: 'how ties count' },
      l2: { type: 'string', value: 'X', help: 'L2 regularisation' },
      samples: { type: 'string', value: 'N', help: 'bootstrap samples' },
      seed: { type: 'string', value: 'N', help: 'the bootstrap seed' },
    }),
    STORE_OPTIONS,
    JSON_OPTIONS,
  ],
  notes: `  pairs  creates a pair for every two finished runs of one block (different run profiles; with --run, every two of
         those runs) and opens the pairwise queue
  vote   --pair ID --overall A|B|tie|both-bad: records a vote
  judge  --judge-model M --judge-base-url URL: the LLM pairwise judge; each pair asked in both orders
  rank   Bradley–Terry ratings per run profile (agent + model + parameters) on the Elo-like scale with bootstrap 95% CIs`,
});

const intArg = (v: string | undefined, flag: string): number | undefined => {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError(`${flag} must be a whole number, got '${v}'`);
  return Number(v);
};

/** Text table of a ranking. */
export function rankingLines(r: PairwiseRanking): string[] {
  const out = [
    `criterion ${r.criterion} · votes from ${r.source} · ${r.votes} battle(s)${r.bothBad.votes ? ` · both bad ${r.bothBad.votes} (${((r.bothBad.rate ?? 0) * 100).toFixed(1)}%)` : ''} · ties ${r.options.ties} · l2 ${r.options.l2} · ${r.options.samples} bootstrap samples`,
  ];
  if (!r.rows.length) {
    out.push('no votes yet');
    return out;
  }
  const w = Math.max(6, ...r.rows.map((x) => x.label.length));
  out.push(`${'#'.padStart(2)}  ${'player'.padEnd(w)}  rating   95% CI          battles  wins  ties`);
  r.rows.forEach((x, i) =>
    out.push(
      `${String(i + 1).padStart(2)}  ${x.label.padEnd(w)}  ${x.rating.toFixed(0).padStart(6)}  [${x.ciLow.toFixed(0)}, ${x.ciHigh.toFixed(0)}]`.padEnd(
        w + 34,
      ) + `${String(x.battles).padStart(7)}  ${String(x.wins).padStart(4)}  ${String(x.ties).padStart(4)}`,
    ),
  );
  if (r.reviewers.length) out.push(`reviewers: ${r.reviewers.map((x) => `${x.label} ${x.votes} vote(s)`).join(', ')}`);
  if (r.judgeHuman) {
    out.push(
      `LLM judge vs human resolution: ${r.judgeHuman.items} pair(s), agreement ${r.judgeHuman.agreement?.toFixed(3) ?? '—'}, κ ${r.judgeHuman.kappa?.toFixed(3) ?? '—'}`,
    );
  }
  if (r.positionConsistency) {
    out.push(`LLM position consistency: ${r.positionConsistency.consistent}/${r.positionConsistency.pairs}`);
  }
  return out;
}

async function review(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (!sub || sub === '--help') throw new UsageError('give a subcommand: pairs, vote, judge or rank');
  const { values } = parseCommand(DECL, rest);
  const rs = await openExistingStore(io, values.store);
  try {
    const ann = annotationStoreOf(rs);
    const sel = {
      ...(values.suite ? { suite: values.suite } : {}),
      ...(values.run?.length ? { runIds: values.run } : {}),
      ...(values.block?.length ? { blockIds: values.block } : {}),
    };
    const suites = new Map<string, Promise<Suite>>();
    switch (sub) {
      case 'pairs': {
        const rubric = values.criteria
          ? values.criteria
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean)
          : [];
        if (values.criteria !== undefined && !rubric.length) throw new UsageError('--criteria names no criterion');
        const reviewers = intArg(values.reviewers, '--reviewers');
        const criteriaOf = criteriaByBlock({ rubric, suites });
        const res = await openPairwiseQueue(ann, rs, sel, criteriaOf, reviewers !== undefined ? { reviewers } : {});
        if (values.json) {
          io.out(
            JSON.stringify(
              { queue: res.queue, pairs: res.items.map((i) => ({ id: i.id, ...pairOf(i) })), skipped: res.skipped },
              null,
              1,
            ) + '\n',
          );
        } else {
          io.out(`${res.queue.id}  ${res.queue.name}\n`);
          for (const i of res.items) {
            const p = pairOf(i);
            io.out(`  ${i.id}  ${p.blockId}  A ${p.runA}  B ${p.runB}  (${p.criteria.length} criteria)\n`);
          }
          for (const s of res.skipped) io.out(`  skipped ${s.runId}: ${s.reason}\n`);
        }
        return 0;
      }
      case 'vote': {
        if (!values.pair) throw new UsageError('--pair ID is required (see loupe review pairs)');
        const item = await ann.getItem(values.pair);
        if (!item || item.task !== PAIRWISE_TASK) {
          throw new UsageError(`--pair ${values.pair}: no such pair in this store (see loupe review pairs)`);
        }
        const p = pairOf(item);
        const choices: Record<string, string> = {};
        for (const c of values.criterion ?? []) {
          const m = /^(.+)=([^=]+)$/.exec(c);
          if (!m) {
            throw new UsageError(`--criterion ${c}: expected NAME=CHOICE (CHOICE one of ${VOTE_CHOICES.join(', ')})`);
          }
          choices[m[1]!.trim()] = m[2]!.trim();
        }
        const verdict = pairwiseVerdict(p.criteria, choices, values.overall, values.rationale ?? '');
        const a = await ann.annotate({
          itemId: item.id,
          annotator: values.annotator ?? annotatorId(io.env),
          verdict,
          origin: 'cli',
        });
        io.out(
          values.json
            ? JSON.stringify({ annotation: a }, null, 1) + '\n'
            : `recorded ${a.id} by ${annotatorLabel(a.annotator, a.dbRole ? [a.dbRole] : [])}: overall ${verdict.overall}\n`,
        );
        return 0;
      }
      case 'judge': {
        const judgeArgs = {
          judge: values.judge ?? 'llm',
          'judge-model': values['judge-model'],
          'judge-base-url': values['judge-base-url'],
          'judge-api-key-env': values['judge-api-key-env'],
        };
        if (judgeArgs.judge !== 'llm') {
          throw new UsageError(`--judge must be llm for pairwise judging, got '${judgeArgs.judge}'`);
        }
        const judge = judgeFromArgs(judgeArgs, judgementStoreOf(rs), io.env);
        const inconsistent = values.inconsistent ?? 'tie';
        if (inconsistent !== 'tie' && inconsistent !== 'drop') {
          throw new UsageError(`--inconsistent must be tie or drop, got '${inconsistent}'`);
        }
        let items = await ann.listItems({ task: PAIRWISE_TASK, ...(values.suite ? { suite: values.suite } : {}) });
        if (values.run?.length) {
          items = items.filter((i) => {
            const p = pairOf(i);
            return values.run!.includes(p.runA) && values.run!.includes(p.runB);
          });
        }
        if (!items.length) throw new UsageError('no pairs to judge: open them first with loupe review pairs');
        const res = await judgePairs(
          rs,
          judge,
          items,
          async (id) => reviewMarkdown((await reviewSourceOf(rs, id, runsRootOf(io, values.store))).source),
          (p) => pairInstruction(rs, p, suites),
          { inconsistent },
        );
        if (values.json) io.out(JSON.stringify(res, null, 1) + '\n');
        else {
          io.out(
            `judged ${res.judged} pair(s) with ${judge.id}; position-consistent ${res.consistent}/${res.judged}${res.judged ? ` (${((res.consistent / res.judged) * 100).toFixed(1)}%)` : ''}; inconsistent counted as ${inconsistent === 'tie' ? 'a tie' : 'left out'}\n`,
          );
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
        if (!['human', 'llm', 'all'].includes(source)) {
          throw new UsageError(`--source must be human, llm or all, got '${values.source}'`);
        }
        const ties = values.ties ?? 'half';
        if (ties !== 'half' && ties !== 'ignore') throw new UsageError(`--ties must be half or ignore, got '${ties}'`);
        const r = await pairwiseRanking(ann, rs, {
          ...(values.suite ? { suite: values.suite } : {}),
          ...(values.run?.length ? { runIds: values.run } : {}),
          criterion: values.criterion?.[0] ?? 'overall',
          source,
          ties,
          ...(l2 !== undefined ? { l2 } : {}),
          ...(samples !== undefined ? { samples } : {}),
          ...(seed !== undefined ? { seed } : {}),
        });
        if (values.json) {
          io.out(
            JSON.stringify(
              r.rows.map(({ player, agent, model, paramsHash, rating, ciLow, ciHigh, battles, wins, ties: t }) => ({
                player,
                agent,
                model,
                paramsHash,
                rating,
                ciLow,
                ciHigh,
                battles,
                wins,
                ties: t,
              })),
              null,
              1,
            ) + '\n',
          );
        } else io.out(rankingLines(r).join('\n') + '\n');
        return 0;
      }
      default:
        throw new UsageError(`unknown subcommand '${sub}' (pairs, vote, judge, rank)`);
    }
  } finally {
    await rs.close();
  }
}

export const reviewCommand = defineCommand({
  name: 'review',
  summary: 'side-by-side review: pairwise queues of runs, votes, the LLM pairwise judge, Bradley–Terry ranking',
  declarations: [DECL],
  run: review,
});
