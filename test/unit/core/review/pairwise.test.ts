import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main } from '../../../../src/cli/main.ts';
import { annotationStoreOf, parseJsonl, type AnnotationStore } from '../../../../src/core/annotations/index.ts';
import { CallbackJudge } from '../../../../src/core/eval/judges/index.ts';
import { judgementStoreOf } from '../../../../src/core/eval/store.ts';
import {
  candidatePairs,
  choiceFromSides,
  ensurePairItem,
  judgePairs,
  leftSideFor,
  nextPair,
  openPairwiseQueue,
  pairOf,
  pairwiseRanking,
  pairwiseVerdict,
  playerOf,
  screenChoice,
} from '../../../../src/core/review/pairwise.ts';
import type { RunRecord } from '../../../../src/core/store/records.ts';
import { openStore, type RunStore } from '../../../../src/core/store/run-store.ts';
import type { JudgeInput } from '../../../../src/core/eval/judges/types.ts';

let dir = '';
let rs: RunStore;
let ann: AnnotationStore;
const CRIT = ['Correctness', 'Clarity'];

async function run(
  id: string,
  block: string,
  model: string,
  extra: Partial<{ temperature: number; status: RunRecord['status']; checksum: string }> = {},
): Promise<void> {
  await rs.createRun({
    id,
    suite: 'analystbench',
    blockId: block,
    agent: 'llm',
    model,
    params: { model, ...(extra.temperature !== undefined ? { temperature: extra.temperature } : {}) },
    promptHash: 'h',
    toolSet: 't',
    dataChecksums: { 'a.csv': extra.checksum ?? 'x' },
    loupeVersion: 't',
    sandbox: 'off',
    workspace: dir,
  });
  await rs.updateRun(id, { status: extra.status ?? 'finished' });
}

const vote = (overall: string, choices: Record<string, string> = {}) =>
  pairwiseVerdict(
    CRIT,
    { Correctness: choices.Correctness ?? overall, Clarity: choices.Clarity ?? overall },
    overall,
    'because',
  );

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-review-'));
  rs = openStore(join(dir, 'runs.sqlite'));
  ann = annotationStoreOf(rs);
  // three players (two models, and one model at two temperatures) on four blocks
  for (const b of ['b1', 'b2', 'b3', 'b4']) {
    await run(`${b}-strong`, b, 'strong');
    await run(`${b}-weak`, b, 'weak');
    await run(`${b}-mid`, b, 'mid', { temperature: 0.7 });
  }
  await run('b1-strong-again', 'b1', 'strong'); // same profile as b1-strong: never paired with it
  await run('b1-failed', 'b1', 'weak', { status: 'failed' });
  await run('b5-alone', 'b5', 'strong');
});
after(async () => {
  await rs?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('pairwise review items', () => {
  it('a player is a run profile: two temperatures of one model are two players, repeats are one', async () => {
    const a = playerOf((await rs.getRun('b1-strong'))!);
    const b = playerOf((await rs.getRun('b1-strong-again'))!);
    const m = playerOf((await rs.getRun('b1-mid'))!);
    assert.equal(a.player, b.player);
    assert.notEqual(
      playerOf({ ...(await rs.getRun('b1-mid'))!, params: { model: 'mid', temperature: 0 } }).player,
      m.player,
    );
    assert.match(m.label, /mid · T=0\.7/);
  });

  it('refuses two runs of different blocks (naming both), a run with itself, unknown runs, no criteria', async () => {
    await assert.rejects(
      ensurePairItem(ann, rs, 'b1-strong', 'b2-weak', CRIT),
      /different blocks \(analystbench b1 and analystbench b2\)/,
    );
    await assert.rejects(ensurePairItem(ann, rs, 'b1-strong', 'b1-strong', CRIT), /compared with itself/);
    await assert.rejects(ensurePairItem(ann, rs, 'b1-strong', 'nope', CRIT), /run nope.*not in the store/);
    await assert.rejects(ensurePairItem(ann, rs, 'b1-strong', 'b1-weak', [' ']), /at least one criterion/);
  });

  it('one item per pair whichever order it is asked in; the queue holds every cross-profile pair of finished runs', async () => {
    const x = await ensurePairItem(ann, rs, 'b1-weak', 'b1-strong', CRIT);
    const y = await ensurePairItem(ann, rs, 'b1-strong', 'b1-weak', CRIT);
    assert.equal(x.id, y.id);
    assert.equal(pairOf(x).runA, 'b1-strong');
    const { pairs, skipped } = await candidatePairs(rs, { suite: 'analystbench' });
    // b1: strong, strong-again, weak, mid → 5 cross-profile pairs (strong/strong-again not paired); b2–b4: 3 each
    assert.equal(pairs.length, 5 + 3 * 3);
    assert.ok(skipped.some((s) => s.runId === 'b1-failed' && /status failed/.test(s.reason)));
    assert.ok(skipped.some((s) => s.runId === 'b5-alone' && /only reviewable run/.test(s.reason)));
    const { queue, items } = await openPairwiseQueue(ann, rs, { suite: 'analystbench' }, () => CRIT);
    assert.equal(items.length, 14);
    assert.equal((await ann.progress(queue.id)).total, 14);
    assert.equal(queue.spec.kind, 'pairs');
  });

  it('blind sides: randomised per pair and reviewer, and screen choices map back to the runs', () => {
    const lefts = Array.from({ length: 200 }, (_, i) => leftSideFor(`p:${i}`, 'ann'));
    const a = lefts.filter((x) => x === 'A').length;
    assert.ok(a > 70 && a < 130, `left = A for ${a} of 200 pairs`);
    assert.notDeepEqual(
      Array.from({ length: 20 }, (_, i) => leftSideFor(`p:${i}`, 'ann')),
      Array.from({ length: 20 }, (_, i) => leftSideFor(`p:${i}`, 'bob')),
    );
    for (const left of ['A', 'B'] as const) {
      for (const c of ['left', 'right', 'tie', 'both-bad'] as const) {
        assert.equal(screenChoice(choiceFromSides(c, left), left), c);
      }
    }
    assert.equal(choiceFromSides('left', 'B'), 'B');
  });

  it('a vote needs every criterion and the overall preference', () => {
    assert.throws(() => pairwiseVerdict(CRIT, { Correctness: 'A' }, 'A', ''), /criterion 'Clarity'.*choose/);
    assert.throws(() => pairwiseVerdict(CRIT, { Correctness: 'A', Clarity: 'A' }, undefined, ''), /overall preference/);
    assert.throws(
      () => pairwiseVerdict(CRIT, { Correctness: 'A', Clarity: 'maybe' }, 'A', ''),
      /'maybe' is not one of/,
    );
    assert.throws(
      () => pairwiseVerdict(CRIT, { Correctness: 'A', Clarity: 'A', Depth: 'B' }, 'A', ''),
      /criterion 'Depth'.*not a criterion/,
    );
  });
});

describe('ranking and active sampling', () => {
  it('serves the least certain pair first and never the same pair twice to a reviewer', async () => {
    const q = (await ann.listQueues()).find((x) => x.spec.kind === 'pairs')!;
    const items = await ann.listItems({ task: 'pairwise-vote' });
    const byRuns = (a: string, b: string) =>
      items.find((i) => {
        const p = pairOf(i);
        return [p.runA, p.runB].sort().join() === [a, b].sort().join();
      })!;
    // strong beats weak and mid beats weak on every block; strong vs mid never voted → that order is the least certain
    for (const b of ['b1', 'b2', 'b3', 'b4']) {
      for (const who of ['ann', 'bob']) {
        const sw = byRuns(`${b}-strong`, `${b}-weak`);
        await ann.annotate({
          itemId: sw.id,
          annotator: who,
          verdict: vote(pairOf(sw).runA === `${b}-strong` ? 'A' : 'B'),
        });
        const mw = byRuns(`${b}-mid`, `${b}-weak`);
        await ann.annotate({
          itemId: mw.id,
          annotator: who,
          verdict: vote(pairOf(mw).runA === `${b}-mid` ? 'A' : 'B'),
        });
      }
    }
    const first = await nextPair(ann, rs, q.id, 'carol');
    assert.ok(first);
    const p = pairOf(first.item);
    assert.deepEqual(
      [p.runA, p.runB].map((r) => r.replace(/^b\d-/, '').replace('-again', '')).sort(),
      ['mid', 'strong'],
      `served ${p.runA} vs ${p.runB}`,
    );
    await ann.release(q.id, first.item.id, 'carol');
    // ann has voted on 8 pairs; she is never served one of them again
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const e = await nextPair(ann, rs, q.id, 'ann');
      if (!e) break;
      assert.ok(!seen.has(e.item.id), 'a pair served twice');
      seen.add(e.item.id);
      const mine = (await ann.annotations(e.item.id)).filter((a) => a.annotator === 'ann');
      assert.equal(mine.length, 0, 'served a pair ann already voted on');
      const ep = pairOf(e.item);
      const strongSide = /strong/.test(ep.runA) ? 'A' : /strong/.test(ep.runB) ? 'B' : 'tie';
      await ann.annotate({ itemId: e.item.id, annotator: 'ann', verdict: vote(strongSide), queueId: q.id });
    }
    assert.equal(seen.size, 14 - 8);
    assert.equal(await nextPair(ann, rs, q.id, 'ann'), undefined);
  });

  it('Bradley–Terry ranking: strongest first, CIs around the rating, both bad as a rate, per criterion', async () => {
    const r = await pairwiseRanking(ann, rs, { suite: 'analystbench', samples: 200 });
    assert.deepEqual(
      r.rows.map((x) => x.model),
      ['strong', 'mid', 'weak'],
    );
    for (const x of r.rows) {
      assert.ok(x.ciLow <= x.rating && x.rating <= x.ciHigh, `${x.label}: ${x.ciLow} ≤ ${x.rating} ≤ ${x.ciHigh}`);
    }
    const mean = r.rows.reduce((s, x) => s + x.rating, 0) / r.rows.length;
    assert.ok(Math.abs(mean - 1000) < 1e-6, `mean rating ${mean}`);
    assert.equal(r.rows.find((x) => x.model === 'weak')!.wins, 0);
    assert.equal(r.bothBad.votes, 0);
    // a "both bad" vote is recorded, reported as a rate, and is not a battle
    const items = await ann.listItems({ task: 'pairwise-vote' });
    await ann.annotate({ itemId: items[0]!.id, annotator: 'dave', verdict: vote('both-bad') });
    const r2 = await pairwiseRanking(ann, rs, { suite: 'analystbench', samples: 200 });
    assert.equal(r2.bothBad.votes, 1);
    assert.equal(r2.votes, r.votes);
    assert.ok(Math.abs(r2.bothBad.rate! - 1 / (r.votes + 1)) < 1e-12);
    // per criterion: on Clarity, weak is voted better than strong once by erin
    const sw = [...items]
      .reverse()
      .find(
        (i) =>
          (pairOf(i).runA.endsWith('strong') && pairOf(i).runB.endsWith('weak')) ||
          (pairOf(i).runB.endsWith('strong') && pairOf(i).runA.endsWith('weak')),
      )!;
    const weakIs = pairOf(sw).runA.endsWith('weak') ? 'A' : 'B';
    await ann.annotate({
      itemId: sw.id,
      annotator: 'erin',
      verdict: vote(weakIs === 'A' ? 'B' : 'A', { Clarity: weakIs }),
    });
    const clarity = await pairwiseRanking(ann, rs, { suite: 'analystbench', criterion: 'Clarity', samples: 100 });
    assert.equal(clarity.rows.find((x) => x.model === 'weak')!.wins, 1);
    assert.equal(
      (await pairwiseRanking(ann, rs, { suite: 'analystbench', samples: 100 })).rows.find((x) => x.model === 'weak')!
        .wins,
      0,
    );
    await assert.rejects(pairwiseRanking(ann, rs, { criterion: 'Depth' }), /criterion 'Depth'.*no pair is voted on it/);
    // the win-rate matrix follows the ranking order
    assert.deepEqual(
      r.matrix.labels,
      r.rows.map((x) => x.label),
    );
    assert.equal(r.matrix.rate[0]![2], 1);
  });

  it('LLM pairwise judge: both orders, an inconsistent choice is a tie (or the pair dropped), consistency reported', async () => {
    const items = (await ann.listItems({ task: 'pairwise-vote' })).slice(0, 4);
    const text = (id: string) => `report of ${id}`;
    // position-biased judge: always prefers the output shown first, unless it is the strong model's
    const biased = new CallbackJudge(
      'llm:biased',
      (task, input) => {
        if (task !== 'pairwise-report') return undefined;
        const i = input as JudgeInput<'pairwise-report'>;
        const pick = i.first.includes('strong') ? 'first' : i.second.includes('strong') ? 'second' : 'first';
        return {
          overall: pick,
          criteria: i.criteria.map((criterion) => ({ criterion, choice: pick })),
          reason: 'scripted',
        } as never;
      },
      judgementStoreOf(rs),
    );
    const res = await judgePairs(
      rs,
      biased,
      items,
      async (id) => text(id),
      async () => 'Write a report',
    );
    assert.equal(res.judged, 4);
    const withStrong = items.filter((i) => [pairOf(i).runA, pairOf(i).runB].some((r) => r.includes('strong')));
    assert.equal(res.consistent, withStrong.length);
    assert.equal(biased.calls, 8);
    const r = await pairwiseRanking(ann, rs, { suite: 'analystbench', source: 'llm', samples: 100 });
    assert.equal(r.positionConsistency!.pairs, 4);
    assert.equal(r.positionConsistency!.consistent, withStrong.length);
    assert.equal(r.votes, 4);
    const ties = r.rows.reduce((s, x) => s + x.ties, 0) / 2;
    assert.equal(ties, 4 - withStrong.length, 'inconsistent pairs count as ties');
    assert.ok(r.judgeHuman && r.judgeHuman.items > 0);
    // drop: inconsistent pairs leave no LLM verdict
    const dropper = new CallbackJudge('llm:dropper', (_task, input) => {
      const i = input as JudgeInput<'pairwise-report'>;
      return {
        overall: 'first',
        criteria: i.criteria.map((criterion) => ({ criterion, choice: 'first' })),
        reason: '',
      } as never;
    });
    const d = await judgePairs(
      rs,
      dropper,
      items,
      async (id) => text(id),
      async () => 'x',
      { inconsistent: 'drop' },
    );
    assert.equal(d.judged, 4);
    assert.equal(d.consistent, 0);
  });
});

describe('agreement on votes', () => {
  it("the agreement report has the overall vote and a group per criterion, on the pair's runs whatever side each reviewer saw", async () => {
    const { agreementReport } = await import('../../../../src/core/annotations/index.ts');
    const r = await agreementReport(ann, { task: 'pairwise-vote' }, { resamples: 50 });
    const overall = r.groups.find((g) => g.task === 'pairwise-vote' && g.criterion === null)!;
    assert.ok(overall.pairableItems >= 8, `${overall.pairableItems} pairs with two reviewers`);
    const clarity = r.groups.find((g) => g.criterion === 'Clarity')!;
    assert.ok(clarity, 'a group per criterion');
    assert.ok(clarity.annotators.includes('ann') && clarity.annotators.includes('bob'));
    const correctness = r.groups.find((g) => g.criterion === 'Correctness')!;
    // erin agreed with ann and bob on Correctness but voted the weak run better on Clarity
    assert.ok(
      clarity.percentAgreement! < correctness.percentAgreement!,
      `Clarity ${clarity.percentAgreement} vs Correctness ${correctness.percentAgreement}`,
    );
  });
});

describe('loupe review (CLI)', () => {
  const io = (out: string[], err: string[]) => ({
    out: (s: string) => void out.push(s),
    err: (s: string) => void err.push(s),
    env: { LOUPE_ANNOTATOR: 'cli-user' },
    cwd: dir,
  });
  it('pairs, vote, rank --json; bad input named', async () => {
    const store = join(dir, 'runs.sqlite');
    const out: string[] = [];
    const err: string[] = [];
    assert.equal(
      await main(
        [
          'review',
          'pairs',
          '--store',
          store,
          '--run',
          'b2-strong',
          '--run',
          'b2-mid',
          '--criteria',
          'Correctness,Clarity',
          '--json',
        ],
        io(out, err),
      ),
      0,
      err.join(''),
    );
    const res = JSON.parse(out.join('')) as { pairs: Array<{ id: string; runA: string; runB: string }> };
    assert.equal(res.pairs.length, 1);
    const p = res.pairs[0]!;
    out.length = 0;
    assert.equal(
      await main(
        [
          'review',
          'vote',
          '--store',
          store,
          '--pair',
          p.id,
          '--overall',
          'A',
          '--criterion',
          'Correctness=A',
          '--criterion',
          'Clarity=tie',
        ],
        io(out, err),
      ),
      0,
      err.join(''),
    );
    assert.match(out.join(''), /recorded .* by cli-user: overall A/);
    err.length = 0;
    assert.notEqual(
      await main(
        ['review', 'vote', '--store', store, '--pair', p.id, '--overall', 'A', '--criterion', 'Correctness=A'],
        io(out, err),
      ),
      0,
    );
    assert.match(err.join(''), /criterion 'Clarity'/);
    out.length = 0;
    assert.equal(
      await main(
        ['review', 'rank', '--store', store, '--suite', 'analystbench', '--samples', '50', '--json'],
        io(out, err),
      ),
      0,
      err.join(''),
    );
    const rows = JSON.parse(out.join('')) as Array<Record<string, unknown>>;
    assert.deepEqual(
      Object.keys(rows[0]!).sort(),
      ['agent', 'battles', 'ciHigh', 'ciLow', 'model', 'paramsHash', 'player', 'rating', 'ties', 'wins'].sort(),
    );
    assert.equal(rows[0]!.model, 'strong');
    err.length = 0;
    assert.notEqual(
      await main(['review', 'pairs', '--store', store, '--run', 'b1-strong', '--run', 'b2-weak'], io(out, err)),
      0,
    );
    assert.match(err.join(''), /no two finished runs of one block/);
  });

  it('export / import of votes: refused from another suite version', async () => {
    const store = join(dir, 'runs.sqlite');
    const out: string[] = [];
    const err: string[] = [];
    const file = join(dir, 'votes.jsonl');
    assert.equal(
      await main(['annotations', 'export', '--store', store, '--task', 'pairwise-vote', '--out', file], io(out, err)),
      0,
      err.join(''),
    );
    const recs = parseJsonl(readFileSync(file, 'utf8'), file);
    assert.ok(recs.some((r) => r.record.type === 'annotation'));
    // a second store has the same runs over other data: importing the votes is refused, naming the item
    const other = openStore(join(dir, 'other.sqlite'));
    try {
      const oa = annotationStoreOf(other);
      const item = recs.find((r) => r.record.type === 'item')!.record as { runId: string };
      const src = (await rs.getRun(item.runId))!;
      const {
        id,
        suite,
        blockId,
        agent,
        model,
        params,
        promptHash,
        toolSet,
        loupeVersion,
        sandbox,
        storedWorkspace: workspace,
      } = src;
      await other.createRun({
        id,
        suite,
        blockId,
        agent,
        model,
        params,
        promptHash,
        toolSet,
        dataChecksums: { 'a.csv': 'other data' },
        loupeVersion,
        sandbox,
        workspace,
      });
      const pairItem = recs.find((r) => r.record.type === 'item')!.record as unknown as { input: { runB: string } };
      const b = (await rs.getRun(pairItem.input.runB))!;
      await other.createRun({
        id: b.id,
        suite: b.suite,
        blockId: b.blockId,
        agent: b.agent,
        model: b.model,
        params: b.params,
        promptHash: b.promptHash,
        toolSet: b.toolSet,
        dataChecksums: { 'a.csv': 'other data' },
        loupeVersion: b.loupeVersion,
        sandbox: b.sandbox,
        workspace: b.storedWorkspace,
      });
      await ensurePairItem(oa, other, id, b.id, CRIT);
      await assert.rejects(
        oa.importRecords(recs, file),
        /comes from suite version data:.* but this store has it from data:/,
      );
    } finally {
      await other.close();
    }
  });
});

describe('run profile (player) across blocks', () => {
  const run = (blockPrompt: string, params: Record<string, unknown>) =>
    ({ agent: 'llm', model: 'm', params, promptHash: blockPrompt, toolSet: 'longda' }) as Pick<
      RunRecord,
      'agent' | 'model' | 'params' | 'promptHash' | 'toolSet'
    >;
  it('one configuration on different blocks is one profile: the block prompt does not count, the block-independent prompt does', () => {
    const a = playerOf(run('hash-of-block-508-prompt', { temperature: 0.2, agentPromptHash: 's1' }));
    const b = playerOf(run('hash-of-block-511-prompt', { temperature: 0.2, agentPromptHash: 's1' }));
    assert.equal(a.player, b.player);
    assert.notEqual(
      playerOf(run('hash-of-block-508-prompt', { temperature: 0.2, agentPromptHash: 's2' })).player,
      a.player,
    );
    assert.notEqual(
      playerOf(run('hash-of-block-508-prompt', { temperature: 0.7, agentPromptHash: 's1' })).player,
      a.player,
    );
    // runs recorded before agentPromptHash existed: agent + model + the other parameters, across blocks too
    assert.equal(playerOf(run('x', { temperature: 0.2 })).player, playerOf(run('y', { temperature: 0.2 })).player);
  });
});
