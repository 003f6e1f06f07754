/**
 * The benchmark registry (issue 12): a test-only benchmark (test/fixtures/benchmarks/count-rows) added by its folder
 * and one registry line is listed, run with a scripted model, scored and reported through the same CLI as the
 * shipped benchmarks; declared options are parsed once, printed in help, and echoed as typed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import '../../../fixtures/benchmarks/register.ts';
import { main } from '../../../../src/cli/main.ts';
import { benchmarkKinds, getBenchmark } from '../../../../src/core/benchmarks/registry.ts';
import { parseOptions } from '../../../../src/core/benchmarks/options.ts';
import { reopenRun } from '../../../../src/core/runs/reopen.ts';
import { buildResultsState } from '../../../../src/app/results/results-data.ts';
import { openStore } from '../../../../src/core/store/run-store.ts';
import { call, startScriptedLlm } from '../../../helpers/scripted-llm.ts';
import { repoRoot } from '../../../helpers/shared.ts';

const ROOT = join(repoRoot, 'test', 'fixtures', 'benchmarks', 'count-rows');
const io = (cwd: string) => {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: {
      out: (s: string) => out.push(s),
      err: (s: string) => err.push(s),
      env: { ...process.env, OPENAI_API_KEY: 'sk-test' },
      cwd,
    },
  };
};

test(
  'a benchmark registered from its folder is listed, run with a scripted model, reopened, scored and aggregated',
  { timeout: 60_000 },
  async () => {
    assert.deepEqual(benchmarkKinds(), [
      'longda',
      'blade',
      'blade-mcq',
      'ddr',
      'analystbench',
      'dabench',
      'count-rows',
    ]);
    const dir = mkdtempSync(join(tmpdir(), 'loupe-registry-'));
    const srv = await startScriptedLlm({
      scriptFor: (first) => [
        { content: 'Counting.', toolCalls: [call('submit_count', { count: first.includes('seven.csv') ? 7 : 2 })] },
      ],
    });
    try {
      const b = io(dir);
      assert.equal(await main(['blocks', '--suite', 'Count-Rows', '--root', ROOT, '--json'], b.io), 0, b.err.join(''));
      const listed = JSON.parse(b.out.join('')) as Array<{ id: string; rows: number; itemCount: number }>;
      assert.deepEqual(
        listed.map((l) => [l.id, l.rows, l.itemCount]),
        [
          ['seven', 7, 1],
          ['small', 3, 1],
        ],
      );
      const store = join(dir, 'runs.sqlite');
      const r = io(dir);
      assert.equal(
        await main(
          [
            'run',
            '--suite',
            'count-rows',
            '--root',
            ROOT,
            '--blocks',
            'all',
            '--agent',
            'llm',
            '--model',
            'scripted',
            '--base-url',
            srv.baseUrl,
            '--sandbox',
            'off',
            '--store',
            store,
            '--json',
          ],
          r.io,
        ),
        0,
        r.err.join(''),
      );
      const runs = r.out
        .join('')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { runId: string; blockId: string; status: string });
      assert.deepEqual(runs.map((x) => [x.blockId, x.status]).sort(), [
        ['seven', 'finished'],
        ['small', 'finished'],
      ]);
      // the one core function that reopens a stored run's suite and block
      const s = openStore(store);
      const again = await reopenRun((await s.getRun(runs[0]!.runId))!);
      assert.equal(again.benchmark.kind, 'count-rows');
      assert.equal(again.block.id, runs[0]!.blockId);
      assert.equal(again.params.suiteRoot, ROOT);
      s.close();
      const sc = io(dir);
      assert.equal(await main(['score', '--store', store, '--all', '--json', '--no-save'], sc.io), 0, sc.err.join(''));
      const j = JSON.parse(sc.out.join('')) as {
        runs: Array<{ blockId: string; summary: { correct: number }; detail: { given: number; expected: number } }>;
        aggregates: Array<{ benchmark: string; metrics: { correct: number } }>;
      };
      const byBlock = Object.fromEntries(j.runs.map((x) => [x.blockId, x]));
      assert.deepEqual(byBlock.seven!.detail, { given: 7, expected: 7 });
      assert.deepEqual(byBlock.small!.detail, { given: 2, expected: 3 }, 'the scripted model miscounts small.csv');
      assert.deepEqual(
        j.aggregates.map((a) => [a.benchmark, a.metrics.correct]),
        [['count-rows', 0.5]],
      );
      const text = io(dir);
      assert.equal(await main(['score', '--store', store, '--all', '--no-save'], text.io), 0);
      assert.match(text.out.join(''), /count-rows\/small {2}scripted {2}correct no/);
      // saved scores reach the Results view through the benchmark's presentation (its table title), not its name
      assert.equal(await main(['score', '--store', store, '--all'], io(dir).io), 0);
      const st = openStore(store);
      const state = await buildResultsState(st);
      await st.close();
      const table = state.tables.find((t) => t.suite === 'count-rows');
      assert.equal(table?.title, 'Count Rows');
      assert.deepEqual(
        table?.rows.map((r) => [r.block, r.cells.correct?.value]),
        [
          ['seven', 1],
          ['small', 0],
        ],
      );
    } finally {
      await srv.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('options are declared once: parsed into typed values with defaults, printed in help, echoed as typed', async () => {
  const longda = getBenchmark('LongDA');
  assert.deepEqual(parseOptions(longda.scoreOptions, { tolerance: '0.1' }), {
    tolerance: 0.1,
    tolerance_floor: 1,
    list_scoring: 'partial',
    coverage: 'comparable',
    infinite_mae: 'inf',
    literals: 'cpython',
    summation: 'numpy',
    by_source: 'source',
    answers_csv: 'pandas',
  });
  assert.throws(
    () => parseOptions(longda.scoreOptions, { tolerance: 'x' }),
    /option tolerance: must be a number, got 'x'/,
  );
  assert.throws(
    () => parseOptions(longda.scoreOptions, { tol: '1' }),
    /option tol: unknown for this benchmark \(options: tolerance, tolerance_floor, list_scoring, coverage, infinite_mae, literals, summation, by_source, answers_csv\)/,
  );
  const h = io(process.cwd());
  assert.equal(await main(['score', '--help'], h.io), 0);
  const help = h.out.join('') + h.err.join('');
  for (const b of ['longda', 'blade', 'ddr', 'analystbench']) {
    for (const o of getBenchmark(b).scoreOptions) {
      assert.ok(help.includes(`${o.name}=`), `${b} option ${o.name} in help`);
    }
  }
  assert.match(help, /model_cvar_alternatives=all-specs\|representative \(default all-specs\)/);
  assert.match(help, /--preset official\|paper/);
  assert.match(help, /failed_judgements=exclude\|count \(official count, paper exclude\)/);
  for (const b of ['blade', 'ddr', 'analystbench']) {
    for (const o of getBenchmark(b).scoreOptions) {
      assert.match(o.name, /^[a-z0-9_]+$/, 'scoring options are snake_case, as typed');
    }
  }
});
