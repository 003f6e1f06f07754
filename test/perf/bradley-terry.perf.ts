/**
 * Bradley–Terry bootstrap perf (issue 16): the ranking of the side-by-side review shows bootstrap intervals, refitted
 * whenever the ranking is opened. On 10,000 seeded synthetic votes among 20 players (10% ties):
 *  - subject: one bootstrapBradleyTerry with 1,000 resamples (resample + refit each)
 *  - baseline: 1,000 single fitBradleyTerry calls on the same votes (what 1,000 refits cost without the resampling
 *    tricks: each call aggregates the 10,000 votes and fits from scratch)
 * Goals: subject ≤ 1.5× baseline, and subject ≤ 1,000 ms. Baseline and subject alternate, 5 rounds of each in this
 * process, the first round counted (no warm-up); the median is reported.
 * Usage: node test/perf/bradley-terry.perf.ts   (exit 1 on a FAIL)
 */
import { bootstrapBradleyTerry, fitBradleyTerry, type Battle } from '../../src/core/eval/bradley-terry.ts';
import { seededRandom } from '../../src/core/util/random.ts';

const PLAYERS = 20;
const VOTES = 10_000;
const SAMPLES = 1000;
const ROUNDS = 5;

const rand = seededRandom(16);
const theta = Array.from({ length: PLAYERS }, (_, i) => 1.5 - (3 * i) / (PLAYERS - 1));
const battles: Battle[] = [];
for (let k = 0; k < VOTES; k++) {
  const i = Math.floor(rand() * PLAYERS);
  let j = Math.floor(rand() * (PLAYERS - 1));
  if (j >= i) j++;
  const winner = rand() < 0.1 ? 'tie' : rand() < 1 / (1 + Math.exp(theta[j]! - theta[i]!)) ? 'a' : 'b';
  battles.push({ a: `agent-${i}/model-${i % 4}`, b: `agent-${j}/model-${j % 4}`, winner });
}

let sink = 0;
function baseline(): number {
  const t0 = performance.now();
  for (let s = 0; s < SAMPLES; s++) sink += fitBradleyTerry(battles, { l2: 0.01 }).iterations;
  return performance.now() - t0;
}
function subject(): number {
  const t0 = performance.now();
  const b = bootstrapBradleyTerry(battles, { samples: SAMPLES, seed: 1, l2: 0.01 });
  sink += b.samples;
  return performance.now() - t0;
}

const base: number[] = [];
const subj: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  base.push(baseline());
  subj.push(subject());
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const b = median(base);
const s = median(subj);
const rows = [
  {
    name: `bootstrap of ${SAMPLES.toLocaleString('en')} resamples over ${VOTES.toLocaleString('en')} votes among ${PLAYERS} players vs ${SAMPLES.toLocaleString('en')} single fits`,
    goal: `≤ 1.5× baseline (${(1.5 * b).toFixed(1)} ms)`,
    ok: s <= 1.5 * b,
    ratio: s / b,
    ratioOf: 'to baseline',
  },
  {
    name: `bootstrap of ${SAMPLES.toLocaleString('en')} resamples, absolute`,
    goal: '≤ 1000 ms',
    ok: s <= 1000,
    ratio: s / 1000,
    ratioOf: 'to goal',
  },
];
let fail = 0;
for (const r of rows) {
  if (!r.ok) fail++;
  console.log(
    `${r.name}\n  goal ${r.goal} · measured ${s.toFixed(1)} ms · baseline (${SAMPLES.toLocaleString('en')} × fitBradleyTerry) ${b.toFixed(1)} ms · ratio ${r.ratioOf} ${r.ratio.toFixed(2)} · ${r.ok ? 'PASS' : 'FAIL'}`,
  );
}
console.log(
  JSON.stringify({
    samples: { subjectMs: subj.map((x) => +x.toFixed(1)), baselineMs: base.map((x) => +x.toFixed(1)) },
    sink,
  }),
);
process.exitCode = fail ? 1 : 0;
