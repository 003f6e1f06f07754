import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadSuite } from '../../../../../src/core/benchmarks/index.ts';
import { globMatcher } from '../../../../../src/core/suites/glob.ts';
import { LoupeInputError } from '../../../../../src/core/util/errors.ts';
import { repoRoot, sharedDir } from '../../../../helpers/shared.ts';

const tmp = mkdtempSync(join(tmpdir(), 'loupe-ab-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const fixture = join(repoRoot, 'test', 'fixtures', 'suites', 'analystbench');
const env = { LOUPE_SHARED: sharedDir() };

function manifest(dir: string, name: string, m: unknown): string {
  mkdirSync(dir, { recursive: true });
  const f = join(dir, `${name}.task.json`);
  writeFileSync(f, typeof m === 'string' || Buffer.isBuffer(m) ? m : JSON.stringify(m));
  return f;
}

describe('suites/analystbench: the NCHS Data Brief 508 task pointing into ../shared', async () => {
  const s = await loadSuite('analystbench', fixture, { env });
  const b = s.blocks[0]!;
  it('loads one runnable task with NHANES data and docs visible', () => {
    assert.equal(s.blocks.length, 1);
    assert.equal(b.id, 'nchs_obesity_2021-2023');
    assert.deepEqual(b.problems, []);
    assert.equal(b.runnable, true);
    assert.equal(b.visible.data.length, 64);
    assert.equal(b.visible.docs.length, 80);
    assert.ok(b.visible.data.every((f) => f.rel.startsWith('benchmark/NHANES/data/') && f.rel.endsWith('.xpt')));
    assert.match(b.visible.instruction!, /obesity/);
    assert.match(b.visible.tableOfContents!, /Key findings/);
    assert.equal(b.items[0]!.type, 'analyst-task');
  });
  it('keeps the reference report (Data Brief 508 PDF), checklist and manifest hidden', () => {
    assert.match(basename(b.hidden.referenceReport!), /^Obesity and Severe Obesity/);
    assert.equal(b.hidden.checklist!.length, 5);
    assert.ok(b.hidden.files.some((f) => f.endsWith('checklist.json')));
    assert.ok(b.hidden.files.some((f) => f.endsWith('task.json')));
    const visible = [...b.visible.data, ...b.visible.docs].map((f) => f.path);
    for (const h of b.hidden.files) assert.ok(!visible.includes(h));
  });
  it('is not runnable when LOUPE_SHARED is unset, and says so', async () => {
    const s2 = await loadSuite('analystbench', fixture, { env: {} });
    assert.equal(s2.blocks[0]!.runnable, false);
    assert.ok(s2.blocks[0]!.problems.some((p) => /environment variable\(s\) not set: LOUPE_SHARED/.test(p)));
  });
});

describe('suites/analystbench manifests and bad input', () => {
  it('drops a source glob match that is the reference report', async () => {
    const dir = join(tmp, 'leaky');
    mkdirSync(join(dir, 'src'), { recursive: true });
    writeFileSync(join(dir, 'src', 'table.csv'), 'a\n1\n');
    writeFileSync(join(dir, 'src', 'report.md'), '# the answer');
    manifest(dir, 't', {
      format: 'loupe-analystbench/1',
      task: 't',
      instruction: 'Write it.',
      sources: ['src/**'],
      reference: 'src/report.md',
    });
    const s = await loadSuite('analystbench', dir);
    const b = s.blocks[0]!;
    assert.deepEqual(
      b.visible.data.map((f) => f.rel),
      ['src/table.csv'],
    );
    assert.deepEqual(b.visible.docs, []);
    assert.ok(b.problems.some((p) => /is the reference report or checklist; not made visible/.test(p)));
  });
  it('reports broken JSON naming the manifest and keeps other tasks usable', async () => {
    const dir = join(tmp, 'broken');
    mkdirSync(join(dir, 'src'), { recursive: true });
    writeFileSync(join(dir, 'src', 'a.csv'), 'a\n1\n');
    writeFileSync(join(dir, 'ref.pdf'), '%PDF');
    const bad = manifest(dir, 'a', '{"format": "loupe-analystbench/1", "task": ');
    manifest(dir, 'b', {
      format: 'loupe-analystbench/1',
      task: 'b',
      instruction: 'Write.',
      sources: ['src/*.csv'],
      reference: 'ref.pdf',
    });
    const s = await loadSuite('analystbench', dir);
    assert.deepEqual(
      s.blocks.map((b) => [b.id, b.runnable]),
      [
        ['a', false],
        ['b', true],
      ],
    );
    assert.ok(s.blocks[0]!.problems[0]!.startsWith(`${bad}: invalid JSON`));
    assert.ok(s.problems.some((p) => p.startsWith(bad)));
  });
  it('reports missing fields, a missing reference, unmatched and escaping globs by field', async () => {
    const dir = join(tmp, 'fields');
    const f = manifest(dir, 'x', {
      format: 'other',
      task: 'x',
      sources: { data: ['nothing/*'], docs: ['../etc/*'] },
      reference: 'nope.pdf',
    });
    const s = await loadSuite('analystbench', dir);
    const p = s.blocks[0]!.problems;
    assert.equal(s.blocks[0]!.runnable, false);
    for (const re of [
      / format: expected 'loupe-analystbench\/1'/,
      / instruction: required/,
      / reference: .*nope\.pdf does not exist/,
      / sources\.data: no file matches/,
      / sources\.docs: glob '\.\.\/etc\/\*' may not contain '\.\.'/,
    ]) {
      assert.ok(
        p.some((x) => x.startsWith(f) && re.test(x)),
        `${re} in\n${p.join('\n')}`,
      );
    }
  });
  it('a wrong format value makes an otherwise complete task not runnable, with the problem', async () => {
    const dir = join(tmp, 'format');
    mkdirSync(join(dir, 'src'), { recursive: true });
    writeFileSync(join(dir, 'src', 'a.csv'), 'a\n1\n');
    writeFileSync(join(dir, 'ref.pdf'), '%PDF');
    const good = { task: 'ok', instruction: 'Write.', sources: ['src/*.csv'], reference: 'ref.pdf' };
    manifest(dir, 'ok', { format: 'loupe-analystbench/1', ...good });
    const f = manifest(dir, 'v2', { format: 'loupe-analystbench/2', ...good, task: 'v2' });
    manifest(dir, 'none', { ...good, task: 'none' });
    const s = await loadSuite('analystbench', dir);
    assert.deepEqual(
      s.blocks.map((b) => [b.id, b.runnable]),
      [
        ['none', false],
        ['ok', true],
        ['v2', false],
      ],
    );
    assert.deepEqual(s.blocks[1]!.problems, []);
    assert.ok(
      s.blocks[2]!.problems.some((p) =>
        p.startsWith(`${f} format: expected 'loupe-analystbench/1', got 'loupe-analystbench/2'`),
      ),
      s.blocks[2]!.problems.join('\n'),
    );
    assert.ok(
      s.blocks[0]!.problems.some((p) => / format: expected 'loupe-analystbench\/1', got 'undefined'/.test(p)),
      s.blocks[0]!.problems.join('\n'),
    );
  });
  it('reports a non-UTF-8 manifest naming the file and line', async () => {
    const dir = join(tmp, 'latin1');
    const f = manifest(dir, 'x', Buffer.from([0x7b, 0x0a, 0x22, 0xe9, 0x22, 0x7d]));
    const s = await loadSuite('analystbench', dir);
    assert.ok(s.blocks[0]!.problems.some((p) => p.startsWith(`${f}:2`) && /UTF-8/.test(p)));
  });
  it('rejects an empty folder and a root that is not AnalystBench', async () => {
    const empty = join(tmp, 'empty');
    mkdirSync(empty);
    await assert.rejects(
      loadSuite('analystbench', empty),
      (e: unknown) => e instanceof LoupeInputError && /empty folder/.test(e.message),
    );
    await assert.rejects(
      loadSuite('analystbench', join(sharedDir(), 'data', 'blade', 'datasets')),
      (e: unknown) => e instanceof LoupeInputError && /not an AnalystBench root/.test(e.message),
    );
  });
  it('compiles globs', () => {
    assert.ok(globMatcher('a/**/*.xpt')('a/x/y/z.xpt'));
    assert.ok(globMatcher('a/**/*.xpt')('a/z.xpt'));
    assert.ok(!globMatcher('a/*.xpt')('a/x/z.xpt'));
    assert.ok(globMatcher('docs/**')('docs/a/b.pdf'));
    assert.ok(globMatcher('*.{csv,xlsx}')('t.xlsx'));
    assert.ok(!globMatcher('*.{csv,xlsx}')('t.pdf'));
    assert.throws(() => globMatcher('/etc/*'), LoupeInputError);
  });
});
