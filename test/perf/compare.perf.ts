/**
 * `loupe compare` perf (issue 48): two run profiles over LongDA's size — 474 queries in 27 publications (blocks), each
 * profile 5 repeats of every block (270 scored runs in all) — compared in-process from a SQLite store built through
 * the store API, with 2,000 cluster-bootstrap resamples (and 2,000 sign-flip permutations, the command's default).
 *  - subject: `main(['compare', --store, --suite longda, --a, --b, --json, --resamples 2000])` in this process: opens
 *    the store, reads runs and scores, the per-item observations, clustered SEs, paired t, bootstrap, permutation,
 *    power, JSON out, closes the store.
 *  - baseline (paired, same run): the point estimate alone — open the same store, read the same runs and scores
 *    (`profilesOf`, `observationsOf`), the paired mean of item means (repeats averaged), close; no SE, no resampling.
 * Goal: subject ≤ 500 ms (absolute gate, issue 48); the baseline is printed beside it. Baseline and subject alternate,
 * 5 rounds each in this process, the first round counted (no warm-up); medians reported.
 * Usage: node test/perf/compare.perf.ts   (exit 1 on a FAIL)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { observationsOf, profilesOf, resolveProfile } from '../../src/app/compare/compare.ts';
import { main } from '../../src/cli/main.ts';
import { getBenchmark } from '../../src/core/benchmarks/registry.ts';
import { itemMeans } from '../../src/core/stats/index.ts';
import { openStore } from '../../src/core/store/run-store.ts';
import { seededRandom } from '../../src/core/util/random.ts';
import { verdict } from './verdict.ts';

const ITEMS = 474;
const BLOCKS = 27;
const REPEATS = 5;
const RESAMPLES = 2000;
const ROUNDS = 5;
const GOAL_MS = 500;
const MODELS = ['model-a', 'model-b'] as const;

const dir = mkdtempSync(join(tmpdir(), 'loupe-compare-perf-'));
const storeFile = join(dir, 'runs.sqlite');
try {
  // 474 queries over 27 publications: 15 blocks of 18 and 12 of 17 (bounded loops: 2 × 27 × 5 runs).
  const perBlock = Array.from({ length: BLOCKS }, (_, b) => Math.floor(ITEMS / BLOCKS) + (b < ITEMS % BLOCKS ? 1 : 0));
  const rand = seededRandom(48);
  const pA = Array.from({ length: ITEMS }, () => 0.2 + 0.6 * rand());
  const built = performance.now();
  const store = openStore(storeFile);
  let n = 0;
  for (const model of MODELS) {
    let q0 = 0;
    for (let bi = 0; bi < BLOCKS; bi++) {
      const blockId = `pub-${bi}`;
      for (let r = 0; r < REPEATS; r++) {
        const id = `${model}-${blockId}-${r}`;
        await store.createRun({
          id,
          suite: 'longda',
          blockId,
          agent: 'llm',
          model,
          params: { temperature: 0.7 },
          promptHash: 'h',
          toolSet: 'longda',
          dataChecksums: {},
          loupeVersion: 'perf',
          sandbox: 'off',
          workspace: dir,
        });
        await store.updateRun(id, { status: 'finished' });
        const rows = Array.from({ length: perBlock[bi]! }, (_, q) => {
          const p = pA[q0 + q]! - (model === 'model-b' ? 0.05 : 0);
          const match = rand() < p ? 1 : 0;
          return {
            qId: `q${q}`,
            survey: 'NHANES',
            source: blockId,
            internalId: q,
            answerStructure: 'single',
            rawAnswer: String(match),
            match,
            given: 1,
            expected: 1,
          };
        });
        const summary = { match: rows.reduce((a, x) => a + x.match, 0) / rows.length };
        const detail = {
          runId: id,
          suite: 'longda',
          blockId,
          model,
          agent: 'llm',
          status: 'finished',
          benchmark: 'longda',
          judgeId: 'none',
          options: {},
          summary,
          pending: 0,
          unjudged: 0,
          detail: { score: { rows } },
        };
        await store.scores.save({
          runId: id,
          benchmark: 'longda',
          judgeId: 'none',
          options: {},
          summary,
          detail,
          pending: 0,
          scoredAt: new Date(Date.UTC(2026, 0, 1) + n++).toISOString(),
        });
      }
      q0 += perBlock[bi]!;
    }
  }
  await store.close();
  console.log(
    `store: ${n} scored runs (${ITEMS} items × ${MODELS.length} profiles × ${REPEATS} repeats) built in ${(performance.now() - built).toFixed(0)} ms`,
  );

  const io = (out: string[]) => ({
    out: (s: string) => void out.push(s),
    err: (s: string) => void out.push(s),
    env: process.env,
    cwd: dir,
  });
  let sink = 0;
  let shown: { n: number; clusters: number; mean: number; pointMean: number } | null = null;
  async function subject(): Promise<{ ms: number; mean: number; n: number; clusters: number }> {
    const out: string[] = [];
    const t0 = performance.now();
    const code = await main(
      [
        'compare',
        '--store',
        storeFile,
        '--suite',
        'longda',
        '--a',
        'model-a',
        '--b',
        'model-b',
        '--json',
        '--resamples',
        String(RESAMPLES),
      ],
      io(out),
    );
    const ms = performance.now() - t0;
    if (code !== 0) throw new Error(`loupe compare exited ${code}: ${out.join('')}`);
    const c = JSON.parse(out.join(''));
    if (c.paired.bootstrap.resamples !== RESAMPLES) throw new Error('bootstrap resamples not as asked');
    return { ms, mean: c.paired.difference.mean, n: c.paired.difference.n, clusters: c.paired.difference.clusters };
  }
  async function baseline(): Promise<{ ms: number; mean: number }> {
    const t0 = performance.now();
    const s = openStore(storeFile);
    const def = getBenchmark('longda', 'suite');
    const profiles = await profilesOf(s, 'longda');
    const a = itemMeans(observationsOf(def, resolveProfile(profiles, 'model-a', 'A'), undefined).obs);
    const b = new Map(
      itemMeans(observationsOf(def, resolveProfile(profiles, 'model-b', 'B'), undefined).obs).map((i) => [
        i.item,
        i.mean,
      ]),
    );
    let sum = 0,
      k = 0;
    for (const i of a) {
      const y = b.get(i.item);
      if (y !== undefined) {
        sum += i.mean - y;
        k++;
      }
    }
    await s.close();
    return { ms: performance.now() - t0, mean: sum / k };
  }

  const base: number[] = [];
  const subj: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const b = await baseline();
    const s = await subject();
    base.push(b.ms);
    subj.push(s.ms);
    if (Math.abs(b.mean - s.mean) > 1e-12) {
      throw new Error(`point estimate ${b.mean} differs from loupe compare's ${s.mean}`);
    }
    if (s.n !== ITEMS) throw new Error(`compare paired ${s.n} items, expected ${ITEMS}`);
    sink += s.mean;
    shown = { n: s.n, clusters: s.clusters, mean: s.mean, pointMean: b.mean };
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const b = median(base);
  const s = median(subj);
  verdict(
    `loupe compare in-process from the store: ${ITEMS} items in ${BLOCKS} publications × 2 profiles × ${REPEATS} repeats, ${RESAMPLES.toLocaleString('en')} cluster-bootstrap resamples (+ ${RESAMPLES.toLocaleString('en')} permutations)`,
    `≤ ${GOAL_MS} ms (absolute)`,
    `${s.toFixed(1)} ms median`,
    `point estimate alone (paired mean from the same store, no SE/resampling) ${b.toFixed(1)} ms median; ratio to goal`,
    s / GOAL_MS,
    s <= GOAL_MS,
  );
  console.log(
    JSON.stringify({
      samples: { subjectMs: subj.map((x) => +x.toFixed(1)), baselineMs: base.map((x) => +x.toFixed(1)) },
      shown,
      sink,
    }),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
