/**
 * Issue 48 acceptance: two scripted profiles run three real LongDA NHANES blocks (NCHS Data Briefs 508, 511, 515) three
 * times each through `loupe run` (the scripted OpenAI-compatible model reads the block's prompt and answers every
 * query; profile A is right more often than B, and repeats differ), `loupe score` saves the scores, then
 * `loupe compare` and the "Compare two profiles" view model give the same numbers, and those numbers equal
 * src/core/stats on the per-query match outcomes `loupe score --json` printed; `loupe report --results-json` agrees.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { profilesOf } from '../../../src/app/compare/compare.ts';
import { compareView } from '../../../src/app/compare/compare-view.ts';
import { main } from '../../../src/cli/main.ts';
import { loadSuite } from '../../../src/core/benchmarks/index.ts';
import { pairedDifference, type Observation } from '../../../src/core/stats/index.ts';
import { openStore } from '../../../src/core/store/run-store.ts';
import { call, startScriptedLlm, type ChatRequestBody } from '../../helpers/scripted-llm.ts';
import { sharedData } from '../../helpers/shared.ts';

const ROOT = sharedData('longda', 'benchmark');
const BLOCKS = ['NHANES_NCHS_Data_Brief_No._508', 'NHANES_NCHS_Data_Brief_No._511', 'NHANES_NCHS_Data_Brief_No._515'];
const REPEATS = 3;

function io(cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: { out: (s: string) => void out.push(s), err: (s: string) => void err.push(s), env: process.env, cwd },
  };
}
const firstUser = (req: ChatRequestBody) => String(req.messages.find((m) => m.role === 'user')?.content ?? '');
const lastTool = (req: ChatRequestBody) =>
  String([...req.messages].reverse().find((m) => m.role === 'tool')?.content ?? '');

test(
  'two scripted profiles × 3 NHANES blocks × 3 repeats: loupe compare, the compare view and loupe report agree with src/core/stats',
  { timeout: 300_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-compare-acceptance-'));
    const store = join(dir, 'runs.sqlite');
    // The truth the scripted model "knows" (read here by the test, never shown to the run): query id → ground truth.
    const suite = await loadSuite('longda', ROOT);
    const truth = new Map<string, number | number[] | null>();
    for (const b of suite.blocks) {
      if (BLOCKS.includes(b.id)) {
        for (const [q, v] of Object.entries(b.hidden.answers ?? {})) truth.set(`${b.id}|${q}`, v);
      }
    }
    assert.ok(truth.size >= 9, `ground truth of the three blocks: ${truth.size} queries`);
    // Which repeat of which block a conversation is: conversations of one block start with the same user message.
    const seen = new Map<string, number>();
    const profile = (model: string) => ({
      script: [
        { toolCalls: [call('prompt', {})] },
        (req: ChatRequestBody) => {
          const key = `${model} ${firstUser(req)}`;
          const repeat = seen.get(key) ?? 0;
          seen.set(key, repeat + 1);
          const ids = [...lastTool(req).matchAll(/Question ID: (.+)$/gm)].map((m) => m[1]!.trim());
          assert.ok(ids.length > 0, `the prompt lists question ids: ${lastTool(req).slice(0, 300)}`);
          const calls = ids.map((q, i) => {
            // the prompt's q_id "{survey}_{source}_q{i}" names the block (spaces as underscores) and the block-local id
            const m = /^(.*)_(q\d+)$/.exec(q)!;
            const t = truth.get(`${m[1]!.replace(/ /g, '_')}|${m[2]}`);
            assert.ok(t !== undefined, `ground truth of ${q}`);
            // A answers right unless (i + repeat) % 4 === 0; B unless (i + repeat) % 2 === 0: A is better, repeats differ.
            const right = model === 'scripted-a' ? (i + repeat) % 4 !== 0 : (i + repeat) % 2 !== 0;
            const v = t ?? 1;
            const answer = right ? v : Array.isArray(v) ? v.map((x) => x * 2 + 50) : v * 2 + 50;
            return call('answer', { action: 'add', q_id: q, answer });
          });
          return { toolCalls: [...calls, call('final_answer', {})] };
        },
      ],
    });
    const srvA = await startScriptedLlm(profile('scripted-a'));
    const srvB = await startScriptedLlm(profile('scripted-b'));
    try {
      for (const [model, srv] of [
        ['scripted-a', srvA],
        ['scripted-b', srvB],
      ] as const) {
        const t = io(dir);
        const rc = await main(
          [
            'run',
            '--suite',
            'longda',
            '--root',
            ROOT,
            '--blocks',
            BLOCKS.join(','),
            '--repeats',
            String(REPEATS),
            '--agent',
            'llm',
            '--model',
            model,
            '--base-url',
            srv.baseUrl,
            '--store',
            store,
            '--json',
            '--sandbox',
            'off',
          ],
          t.io,
        );
        assert.equal(rc, 0, t.err.join(''));
        const lines = t.out
          .join('')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { status: string });
        assert.equal(lines.length, BLOCKS.length * REPEATS);
        assert.ok(
          lines.every((l) => l.status === 'finished'),
          t.out.join(''),
        );
      }
      // Score every run (LongDA needs no judge) and keep the per-query outcomes it printed.
      const s = io(dir);
      assert.equal(await main(['score', '--store', store, '--all', '--json'], s.io), 0, s.err.join(''));
      assert.equal((JSON.parse(s.out.join('')) as { runs: unknown[] }).runs.length, 2 * BLOCKS.length * REPEATS);
      // The per-query outcomes the saved scores hold (as scored, not as the scripted model meant them).
      const obs: Record<string, Observation[]> = { 'scripted-a': [], 'scripted-b': [] };
      const st0 = openStore(store);
      try {
        const saved = await st0.scores.list();
        assert.equal(saved.length, 2 * BLOCKS.length * REPEATS);
        for (const sc of saved) {
          const d = sc.detail as {
            model: string;
            blockId: string;
            detail: { score: { rows: { qId: string; match: number }[] } };
          };
          for (const row of d.detail.score.rows) {
            obs[d.model]!.push({ item: `${d.blockId}/${row.qId}`, cluster: d.blockId, value: row.match });
          }
        }
      } finally {
        await st0.close();
      }
      const expected = pairedDifference(obs['scripted-a']!, obs['scripted-b']!, {
        bootstrap: 500,
        permutations: 500,
        seed: 7,
      });
      assert.ok(
        expected.difference.mean > 0,
        `A is better by construction: A ${expected.meanA} B ${expected.meanB}; truth keys ${[...truth.keys()].slice(0, 3).join(' / ')}; items ${obs[
          'scripted-a'
        ]!.slice(0, 3)
          .map((o) => o.item + '=' + o.value)
          .join(' / ')}`,
      );

      // one profile per model across the three blocks (the run's promptHash differs per block; the profile must not)
      const st1 = openStore(store);
      try {
        const profiles = await profilesOf(st1, 'longda');
        assert.deepEqual(
          profiles.map((p) => [p.player.model, p.runs.length]),
          [
            ['scripted-a', BLOCKS.length * REPEATS],
            ['scripted-b', BLOCKS.length * REPEATS],
          ],
        );
        assert.equal(new Set((await st1.listRuns({ suite: 'longda' })).map((r) => r.promptHash)).size, BLOCKS.length);
      } finally {
        await st1.close();
      }
      const c = io(dir);
      assert.equal(
        await main(
          [
            'compare',
            '--store',
            store,
            '--suite',
            'longda',
            '--a',
            'scripted-a',
            '--b',
            'scripted-b',
            '--json',
            '--resamples',
            '500',
            '--seed',
            '7',
          ],
          c.io,
        ),
        0,
        c.err.join(''),
      );
      const cli = JSON.parse(c.out.join(''));
      assert.deepEqual(cli.paired.difference, JSON.parse(JSON.stringify(expected.difference)));
      assert.deepEqual(cli.paired.pairedT, JSON.parse(JSON.stringify(expected.pairedT)));
      assert.deepEqual(cli.paired.bootstrap, JSON.parse(JSON.stringify(expected.bootstrap)));
      assert.equal(cli.paired.difference.clusters, BLOCKS.length);
      assert.equal(cli.a.estimate.repeats.min, REPEATS);
      assert.equal(cli.a.basis.runIds.length, BLOCKS.length * REPEATS);

      const st = openStore(store);
      try {
        const v = await compareView(st, { suite: 'longda', a: 'scripted-a', b: 'scripted-b', bootstrap: 500, seed: 7 });
        assert.deepEqual(v.difference, cli.paired.difference);
        assert.deepEqual(v.pairedT, cli.paired.pairedT);
        assert.deepEqual(v.bootstrap, cli.paired.bootstrap);
        assert.equal(v.minimumDetectable, cli.minimumDetectable);
        assert.equal(v.disagreements.length, cli.paired.disagreements.length);
      } finally {
        await st.close();
      }

      const r = io(dir);
      const json = join(dir, 'results.json');
      assert.equal(
        await main(
          ['report', '--store', store, '--suite', 'longda', '--results-json', json, '--out', join(dir, 'report.md')],
          r.io,
        ),
        0,
        r.err.join(''),
      );
      const results = JSON.parse(readFileSync(json, 'utf8'));
      const h = results.suites[0];
      const rowA = h.rows.find((x: { profile: { model: string } }) => x.profile.model === 'scripted-a');
      assert.equal(rowA.figure.mean, cli.a.estimate.mean);
      assert.equal(rowA.figure.se, cli.a.estimate.se);
      assert.equal(h.comparisons[0].difference, cli.paired.difference.mean);
      assert.equal(h.comparisons[0].se, cli.paired.difference.se);
    } finally {
      await srvA.close();
      await srvB.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
