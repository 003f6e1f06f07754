/**
 * Side-by-side review perf (issue 16): what a reviewer waits for when a pair opens — both reports split into
 * sections, every number extracted and traced to the runs' notebook cells, the two aligned — for two ~100 KB
 * Markdown reports with 20 figures each and 50 cells of output per run. Goal: ≤ 3× parsing the same two reports
 * with marked alone (`marked.parse`, HTML out), measured in the same run.
 * Both sides run from one esbuild bundle (shipped settings) in fresh processes, first touch (no warm-up), baseline
 * and subject alternating, 5 of each; medians compared.
 * Usage: node test/perf/review-align.perf.ts   (exit 1 on a FAIL)
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(here, '..', '..');
const bundle = join(ROOT, 'out', 'perf', 'review-align.cjs');
mkdirSync(dirname(bundle), { recursive: true });
const entry = join(ROOT, 'out', 'perf', 'review-align-entry.ts');
writeFileSync(
  entry,
  `export { reviewDocFromMarkdown, traceNumbers, alignReviewDocs } from '${join(ROOT, 'src', 'core', 'review', 'align.ts')}';\nexport { marked } from 'marked';\n`,
);
await build({
  entryPoints: [entry],
  outfile: bundle,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node22',
  logLevel: 'error',
  nodePaths: [join(ROOT, 'node_modules')],
});

/** A ~100 KB report: headings, prose full of numbers, tables, code blocks and 20 figures; `shift` changes some numbers. */
function report(shift: number): string {
  const parts: string[] = ['# Survey brief\n\nThis brief summarises weighted estimates from the survey.\n'];
  let i = 0;
  while (parts.join('').length < 100_000) {
    parts.push(`\n## Section ${i} — estimates by group ${i % 7}\n\n`);
    for (let p = 0; p < 4; p++) {
      parts.push(
        `Prevalence among adults aged ${20 + p * 10}–${29 + p * 10} was ${(30 + ((i * 7 + p * 3 + shift) % 40) + 0.1 * p).toFixed(1)}% in ${2000 + (i % 20)}, compared with ${(25 + ((i + p) % 30)).toFixed(1)}% a decade earlier; the standard error was ${(0.5 + p / 10).toFixed(2)} and n = ${(1000 + i * 13 + p).toLocaleString('en')}. `,
      );
    }
    parts.push('\n\n| Group | Estimate | SE | n |\n|---|---|---|---|\n');
    for (let r = 0; r < 6; r++) {
      parts.push(
        `| g${r} | ${(10 + r * 3.3 + i / 10).toFixed(1)} | ${(0.2 + r / 20).toFixed(2)} | ${(200 + r * 17 + i).toLocaleString('en')} |\n`,
      );
    }
    parts.push(
      '\n```python\nest = df.groupby("g").apply(lambda x: np.average(x.y, weights=x.w))\nprint(est.round(1))\n```\n',
    );
    if (i < 20) parts.push(`\n![Figure ${i}: prevalence by group ${i}](figures/f${i}.png)\n`);
    i++;
  }
  return parts.join('');
}
const cells = (shift: number) =>
  Array.from({ length: 50 }, (_, s) => ({
    seq: s,
    result: null,
    tables: [{ text: Array.from({ length: 6 }, (_, r) => `g${r}  ${(10 + r * 3.3 + s / 10).toFixed(4)}`).join('\n') }],
    stdout: Array.from(
      { length: 40 },
      (_, k) => `estimate ${k}: ${((30 + ((s * 7 + k * 3 + shift) % 40)) / 100).toFixed(5)}`,
    ).join('\n'),
  }));

const dir = mkdtempSync(join(tmpdir(), 'loupe-review-perf-'));
const data = join(dir, 'data.json');
writeFileSync(data, JSON.stringify({ a: report(0), b: report(3), ca: cells(0), cb: cells(3) }));
const child = `
const t0 = performance.now();
const m = require(${JSON.stringify(bundle)});
const d = JSON.parse(require('node:fs').readFileSync(${JSON.stringify(data)}, 'utf8'));
const t1 = performance.now();
let out;
if (process.argv[1] === 'baseline') out = [m.marked.parse(d.a, { async: false }).length, m.marked.parse(d.b, { async: false }).length];
else {
  const a = m.traceNumbers(m.reviewDocFromMarkdown('a', d.a), d.ca);
  const b = m.traceNumbers(m.reviewDocFromMarkdown('b', d.b), d.cb);
  const rows = m.alignReviewDocs(a, b);
  out = [a.numbers.length, a.numbers.filter((n) => n.source).length, a.figures.length, rows.length, rows.reduce((s, r) => s + r.differing.length, 0)];
}
console.log(JSON.stringify({ ms: performance.now() - t1, loadMs: t1 - t0, out }));
`;
const runOnce = (mode: string) => {
  const r = spawnSync(process.execPath, ['-e', child, mode], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${mode} child failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim()) as { ms: number; loadMs: number; out: number[] };
};
const base: number[] = [];
const subj: number[] = [];
let shape: number[] = [];
for (let i = 0; i < 5; i++) {
  base.push(runOnce('baseline').ms);
  const s = runOnce('subject');
  subj.push(s.ms);
  shape = s.out;
}
rmSync(dir, { recursive: true, force: true });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const b = median(base);
const s = median(subj);
const ratio = s / b;
const ok = ratio <= 3;
console.log(
  `two ~${Math.round(report(0).length / 1000)} KB reports, 20 figures each, 50 cells per run: ${shape[0]} numbers in A (${shape[1]} traced), ${shape[2]} figures, ${shape[3]} aligned rows, ${shape[4]} differing labels`,
);
console.log(
  `sections + numbers + tracing + alignment vs marked.parse alone (first touch, fresh process, median of 5 alternating)\n  goal ≤ 3× baseline · measured ${s.toFixed(1)} ms · baseline ${b.toFixed(1)} ms · ratio ${ratio.toFixed(2)}× · ${ok ? 'PASS' : 'FAIL'}`,
);
if (!ok) process.exitCode = 1;
