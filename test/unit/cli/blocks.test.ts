import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { main } from '../../../src/cli/main.ts';
import { repoRoot, sharedData, sharedDir } from '../../helpers/shared.ts';
import '../../fixtures/benchmarks/register.ts';

const tmp = mkdtempSync(join(tmpdir(), 'loupe-cli-blocks-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function io(env: NodeJS.ProcessEnv = process.env) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: { out: (s: string) => out.push(s), err: (s: string) => err.push(s), env, cwd: process.cwd() },
  };
}
type Row = {
  id: string;
  title: string;
  suite: string;
  items: { id: string; question?: string; groundTruth?: unknown }[];
  itemCount: number;
  runnable: boolean;
  problems: string[];
  survey?: string;
  source?: string;
  decisions?: { cvars: { total: number }; transforms: number; models: number };
  checklistItems?: number;
};
async function json(args: string[], env?: NodeJS.ProcessEnv): Promise<Row[]> {
  const t = io(env);
  const code = await main(['blocks', ...args, '--json'], t.io);
  assert.equal(code, 0, t.err.join(''));
  return JSON.parse(t.out.join('')) as Row[];
}

describe('cli/blocks', () => {
  it("prints the line a benchmark's blockSummary gives (test-only count-rows; no CLI file names a benchmark)", async () => {
    const t = io();
    assert.equal(
      await main(
        ['blocks', '--suite', 'count-rows', '--root', join(repoRoot, 'test', 'fixtures', 'benchmarks', 'count-rows')],
        t.io,
      ),
      0,
      t.err.join(''),
    );
    assert.match(t.out.join(''), /seven\s+1 item, 7 data rows\n/);
  });
  it('LongDA --json: the issue shape plus survey and source', async () => {
    const rows = await json(['--suite', 'longda', '--root', sharedData('longda', 'benchmark')]);
    assert.equal(rows.length, 27);
    assert.equal(
      rows.reduce((n, r) => n + r.items.length, 0),
      474,
    );
    assert.ok(rows.every((r) => r.itemCount === r.items.length));
    const r = rows.find((x) => x.id === 'NHANES_NCHS_Data_Brief_No._508')!;
    assert.deepEqual(Object.keys(r).sort(), [
      'id',
      'itemCount',
      'items',
      'problems',
      'runnable',
      'source',
      'suite',
      'survey',
      'title',
    ]);
    assert.deepEqual(
      [r.suite, r.survey, r.source, r.items.length, r.runnable],
      ['longda', 'NHANES', 'NCHS Data Brief No. 508', 9, true],
    );
    assert.equal(r.items[1]!.question, 'What were the obesity prevalences for men and women?');
    assert.ok(r.items.every((i) => !('groundTruth' in i) && !('answerText' in i)));
    assert.ok(!JSON.stringify(rows).includes('39.2'), 'no ground truth in the listing');
  });
  it('BLADE --json adds decision counts; blade-mcq counts MCQs as items', async () => {
    const rows = await json(['--suite', 'blade', '--root', sharedData('blade', 'datasets')]);
    const h = rows.find((x) => x.id === 'hurricane')!;
    assert.deepEqual([h.decisions!.cvars.total, h.decisions!.transforms, h.decisions!.models], [4, 6, 18]);
    assert.ok(rows.find((x) => x.id === 'soccer')!.problems.some((p) => /data\.csv missing/.test(p)));
    const mcq = await json(['--suite', 'blade-mcq', '--root', sharedData('blade', 'datasets')]);
    assert.equal(mcq.find((x) => x.id === 'affairs')!.items.length, 33);
    assert.ok(!JSON.stringify(mcq).includes('correctLabel'));
  });
  it('DDR --json adds checklist counts; --entities names a table column', async () => {
    const rows = await json(['--suite', 'ddr', '--root', sharedData('ddr', 'globem')]);
    assert.equal(rows.length, 91);
    assert.equal(
      rows.reduce((n, r) => n + r.checklistItems!, 0),
      435,
    );
    const demo = await json([
      '--suite',
      'ddr',
      '--root',
      sharedData('mimic-iv-demo'),
      '--entities',
      'patients.subject_id',
      '--tables',
      'hosp_patients,icu_icu*',
      '--database',
      join(tmp, 'demo.sqlite'),
    ]);
    assert.equal(demo.length, 100);
    assert.ok(demo.every((r) => r.runnable && r.checklistItems === 0));
  });
  it('AnalystBench reads LOUPE_SHARED from the environment', async () => {
    const rows = await json(
      ['--suite', 'analystbench', '--root', join(repoRoot, 'test', 'fixtures', 'suites', 'analystbench')],
      { ...process.env, LOUPE_SHARED: sharedDir() },
    );
    assert.deepEqual(
      rows.map((r) => [r.id, r.items.length, r.runnable]),
      [['nchs_obesity_2021-2023', 1, true]],
    );
  });
  it('prints a readable table without --json', async () => {
    const t = io();
    assert.equal(await main(['blocks', '--suite', 'blade', '--root', sharedData('blade', 'datasets')], t.io), 0);
    const text = t.out.join('');
    assert.match(text, /BLADE .*: 12 blocks, 12 items, 10 runnable/);
    assert.match(text, /✘ soccer/);
  });
  it('fails with the file named for a root that is not the suite, an empty folder, and usage errors', async () => {
    let t = io();
    assert.equal(await main(['blocks', '--suite', 'blade', '--root', sharedData('longda', 'benchmark')], t.io), 1);
    assert.match(t.err.join(''), /not a BLADE datasets\/ root/);
    const empty = join(tmp, 'empty');
    mkdirSync(empty);
    t = io();
    assert.equal(await main(['blocks', '--suite', 'longda', '--root', empty], t.io), 1);
    assert.match(t.err.join(''), new RegExp(`${empty}: empty folder`));
    t = io();
    assert.equal(await main(['blocks', '--suite', 'nope', '--root', empty], t.io), 1);
    assert.match(t.err.join(''), /unknown suite 'nope'/);
    t = io();
    assert.equal(await main(['blocks', '--root', empty], t.io), 2);
    t = io();
    assert.equal(await main(['blocks', '--suite', 'longda', '--root', empty, '--entities', 'a.b'], t.io), 2);
  });
});
