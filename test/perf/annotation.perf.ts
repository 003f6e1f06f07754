/**
 * Annotation queue perf (issue 14), host side: a store with 10,000 pending human judgements (claim support on one
 * run of 300 steps and 60 notebook cells). What an expert waits for:
 *  - first item: open the store, open the queue (10,000 items), serve the first item with its evidence  (goal ≤ 300 ms)
 *  - next item: after a verdict, serve the next item with its evidence, p95 over 20                      (goal ≤ 50 ms)
 * measured from the host code bundled with the shipped esbuild settings (out/perf/annotation.cjs), first touch in a
 * fresh process on a fresh copy of the store — against a baseline in the same run: the same rows read straight
 * from SQLite with better-sqlite3. Baseline and subject processes alternate, 3 of each; the median is reported.
 * The webview side (first-item paint, next-item latency in the real VS Code) is printed by the integration suite.
 * Usage: node test/perf/annotation.perf.ts   (exit 1 on a FAIL)
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { canonicalJson, sha256 } from '../../src/core/eval/judges/judge.ts';
import { openStore, sqliteHandleOf } from '../../src/core/store/run-store.ts';
import type { StepRecord } from '../../src/core/store/records.ts';

const here = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(here, '..', '..');
const N = 10_000;
const bundle = join(ROOT, 'out', 'perf', 'annotation.cjs');
mkdirSync(dirname(bundle), { recursive: true });
await build({
  entryPoints: [join(here, 'annotation-entry.ts')],
  outfile: bundle,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node22',
  external: ['better-sqlite3'],
  logLevel: 'error',
});

const dir = mkdtempSync(join(tmpdir(), 'loupe-annot-perf-'));
const template = join(dir, 'template.sqlite');
const rs = openStore(template);
await rs.createRun({
  id: 'perf-run',
  suite: 'analystbench',
  blockId: 'b',
  agent: 'llm',
  model: 'm',
  params: {},
  promptHash: 'h',
  toolSet: 't',
  dataChecksums: { 'a.csv': 'x' },
  loupeVersion: 't',
  sandbox: 'off',
  workspace: dir,
});
const now = new Date().toISOString();
for (let i = 0; i < 300; i++) {
  const step: StepRecord = {
    runId: 'perf-run',
    index: i,
    startedAt: now,
    endedAt: now,
    latencyMs: 1,
    toolMs: 1,
    assistant: { role: 'assistant', content: `Step ${i}: computing the weighted estimate ${i}.` },
    toolCalls: [
      {
        id: `c${i}`,
        name: i % 3 ? 'python' : 'search_doc',
        argumentsText:
          i % 3
            ? JSON.stringify({ code: `x_${i} = df.mean()` })
            : JSON.stringify({ keyword: `VAR${i}`, doc_path: 'docs/codebook.pdf' }),
        observation: `obs ${i} `.repeat(30),
        isError: false,
        truncated: false,
        durationMs: 1,
      },
    ],
    extraMessages: [],
    usage: { input: 1, output: 1, cached: 0 },
    costUsd: null,
    finishReason: 'tool_calls',
  };
  await rs.commitStep(
    step,
    i % 5 === 0
      ? {
          cells: [
            {
              runId: 'perf-run',
              seq: i / 5,
              stepIndex: i,
              code: `x_${i} = df.mean()\nprint(x_${i})`,
              status: 'ok',
              stdout: `${(40 + i / 10).toFixed(1)}\n`,
              stderr: '',
              result: null,
              error: null,
              tables: [],
              durationMs: 1,
              replay: false,
              figures: [],
            } as never,
          ],
        }
      : {},
  );
}
const ins = sqliteHandleOf(rs).prepare(
  `INSERT INTO judgements (cache_key, judge_id, task, input_hash, prompt_hash, input, raw_output, verdict, status, run_id, item_ref, judged_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`,
);
sqliteHandleOf(rs).transaction(() => {
  for (let i = 0; i < N; i++) {
    const input = {
      claim: `In 2021 the weighted prevalence in group ${i} was ${(30 + (i % 200) / 10).toFixed(1)} percent.`,
      sources: `Table ${i % 40}: prevalence by group and year. `.repeat(8),
    };
    const hash = sha256(`claim-support\u0000${canonicalJson(input)}`);
    ins.run(
      `k${i}`,
      'human',
      'claim-support',
      hash,
      null,
      JSON.stringify(input),
      null,
      null,
      'pending',
      'perf-run',
      `claim ${i}`,
      new Date(Date.parse(now) + i).toISOString(),
    );
  }
})();
rs.close();

interface Sample {
  firstMs: number;
  nextMs: number[];
}
function sample(mode: 'subject' | 'baseline', k: number): Sample {
  const file = join(dir, `${mode}-${k}.sqlite`);
  copyFileSync(template, file);
  const r = spawnSync(
    process.execPath,
    ['--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', join(here, 'annotation.child.ts'), mode, bundle, file],
    { encoding: 'utf8', timeout: 120_000 },
  );
  if (r.status !== 0) throw new Error(`${mode} sample failed: ${r.stderr}`);
  rmSync(file, { force: true });
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Sample;
}

const subject: Sample[] = [];
const baseline: Sample[] = [];
for (let k = 0; k < 3; k++) {
  baseline.push(sample('baseline', k));
  subject.push(sample('subject', k));
}
if (process.env.KEEP) console.log('template', template);
else rmSync(dir, { recursive: true, force: true });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(0.95 * xs.length))]!;
const rows = [
  {
    name: `first item of a ${N.toLocaleString('en')}-item queue (open store + queue + first item with evidence)`,
    goalMs: 300,
    ms: median(subject.map((s) => s.firstMs)),
    baseMs: median(baseline.map((s) => s.firstMs)),
  },
  {
    name: 'next item after a verdict (p95 of 20, with evidence)',
    goalMs: 50,
    ms: median(subject.map((s) => p95(s.nextMs))),
    baseMs: median(baseline.map((s) => p95(s.nextMs))),
  },
];
let fail = 0;
for (const r of rows) {
  const ok = r.ms <= r.goalMs;
  if (!ok) fail++;
  console.log(
    `${r.name}\n  goal ≤ ${r.goalMs} ms · measured ${r.ms.toFixed(1)} ms · baseline (straight from SQLite) ${r.baseMs.toFixed(1)} ms · ratio to baseline ${(r.ms / r.baseMs).toFixed(1)}× · ratio to goal ${(r.ms / r.goalMs).toFixed(2)} · ${ok ? 'PASS' : 'FAIL'}`,
  );
}
console.log(
  JSON.stringify({
    samples: {
      subject: subject.map((s) => ({ firstMs: +s.firstMs.toFixed(1), nextP95: +p95(s.nextMs).toFixed(1) })),
      baseline: baseline.map((s) => ({ firstMs: +s.firstMs.toFixed(1), nextP95: +p95(s.nextMs).toFixed(1) })),
    },
  }),
);
process.exitCode = fail ? 1 : 0;
