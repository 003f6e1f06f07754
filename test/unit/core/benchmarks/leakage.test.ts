import assert from 'node:assert/strict';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  createGuard,
  createTaskWorkspace,
  loadSuite,
  PathNotVisibleError,
  publicItems,
  taskMarkdown,
  type Block,
  type LongdaQuery,
} from '../../../../src/core/benchmarks/index.ts';
import { LoupeInputError } from '../../../../src/core/util/errors.ts';
import { repoRoot, sharedData, sharedDir } from '../../../helpers/shared.ts';

const tmp = mkdtempSync(join(tmpdir(), 'loupe-leak-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** Every hidden file of a block, as absolute paths. */
function hiddenOf(b: Block): string[] {
  return [
    ...new Set([
      ...b.hidden.files,
      ...(b.hidden.publications ?? []),
      ...(b.hidden.referenceReport ? [b.hidden.referenceReport] : []),
    ]),
  ].filter((f) => existsSync(f));
}

/** Tries every way we can think of to name `target` through the guard; all must fail. */
function attack(b: Block, target: string, ws?: string) {
  const anchors = [...b.visible.data, ...b.visible.docs].slice(0, 2);
  const attempts = new Set<string>([target, `${target}/`, `${dirname(target)}/./${target.split('/').pop()}`]);
  for (const a of anchors) {
    const rel = relative(dirname(a.path), target);
    attempts.add(`${dirname(a.rel)}/${rel}`);
    attempts.add(rel);
    attempts.add(`${a.rel}/../${rel}`);
    attempts.add(`${dirname(a.path)}/${rel}`);
    attempts.add(rel.replace(/\//g, '\\'));
  }
  attempts.add(target.split('/').pop()!);
  if (ws) attempts.add(join(ws, relative(ws, target)));
  const g = createGuard(b, ws ? { workspaceDir: ws } : {});
  for (const p of attempts) {
    assert.equal(g.isVisible(p), false, `guard let through ${p}`);
    assert.throws(
      () => g.resolve(p),
      (e: unknown) => e instanceof PathNotVisibleError && e instanceof LoupeInputError,
      p,
    );
  }
  assert.throws(() => g.list('..'), PathNotVisibleError);
  assert.throws(() => g.list(dirname(target)), PathNotVisibleError);
}

function walkReal(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (lstatSync(p).isDirectory()) out.push(...walkReal(p));
    else out.push(realpathSync(p));
  }
  return out;
}

describe('leakage guard: LongDA (answers, publications)', async () => {
  const s = await loadSuite('longda', sharedData('longda', 'benchmark'));
  const b = s.blocks.find((x) => x.id === 'NHANES_NCHS_Data_Brief_No._508')!;
  it('resolves visible files by workspace path and by their own absolute path', () => {
    const g = createGuard(b);
    const bmx = b.visible.data.find((f) => f.rel === 'data/Examination/BMX_L.xpt')!;
    assert.equal(g.resolve('data/Examination/BMX_L.xpt'), realpathSync(bmx.path));
    assert.equal(g.resolve('./data//Examination/BMX_L.xpt'), realpathSync(bmx.path));
    assert.equal(g.resolve(bmx.path), realpathSync(bmx.path));
    assert.deepEqual(g.list(''), ['data/', 'docs/']);
    assert.ok(g.list('data').includes('Examination/'));
  });
  it('refuses benchmark.csv, DATASET_CARD.md and every publication, however they are named', () => {
    const hidden = hiddenOf(b);
    assert.ok(hidden.some((h) => h.endsWith('benchmark.csv')));
    assert.equal(hidden.filter((h) => h.endsWith('.pdf')).length, 7);
    for (const h of hidden) attack(b, h);
    attack(b, sharedData('longda', 'publications', 'NSFG', 'pubs', 'db520.pdf'));
  });
  it('never puts ground truth in TASK.md or public items', () => {
    const md = taskMarkdown(b);
    assert.match(md, /What were the obesity prevalences for men and women\?/);
    assert.match(md, /\[men, women\]/);
    for (const q of b.items as LongdaQuery[]) {
      if (Array.isArray(q.groundTruth)) assert.ok(!md.includes(q.answerText.trim()), `answer ${q.answerText} leaked`);
    }
    assert.ok(!md.includes('[39.2, 41.3]') && !md.includes('39.2'));
    for (const it of publicItems(b)) assert.ok(!('groundTruth' in it) && !('answerText' in it));
  });
  it('workspace: TASK.md + symlinks to visible files only; symlink swaps and planted links are refused', () => {
    const ws = join(tmp, 'ws-longda');
    const r = createTaskWorkspace(b, ws, { mode: 'symlink' });
    assert.equal(r.mode, 'symlink');
    assert.equal(r.files.length, 64 + 80);
    assert.ok(existsSync(join(ws, 'TASK.md')));
    assert.ok(lstatSync(join(ws, 'data', 'Examination', 'BMX_L.xpt')).isSymbolicLink());
    const hidden = new Set(hiddenOf(b).map((h) => realpathSync(h)));
    for (const f of walkReal(ws)) assert.ok(!hidden.has(f), `${f} is hidden`);
    const g = createGuard(b, { workspaceDir: ws });
    assert.ok(g.isVisible(join(ws, 'data', 'Examination', 'BMX_L.xpt')));
    // an agent replaces a visible link by a link to the publication
    const link = join(ws, 'data', 'Examination', 'BMX_L.xpt');
    unlinkSync(link);
    symlinkSync(b.hidden.publication!, link);
    assert.throws(() => g.resolve(link), PathNotVisibleError);
    // or plants a new link
    symlinkSync(sharedData('longda', 'benchmark', 'benchmark.csv'), join(ws, 'data', 'answers.csv'));
    assert.throws(() => g.resolve(join(ws, 'data', 'answers.csv')), PathNotVisibleError);
    assert.throws(() => g.resolve('data/answers.csv'), PathNotVisibleError);
    attack(b, sharedData('longda', 'benchmark', 'benchmark.csv'), ws);
  });
  it('refuses to write into a non-empty folder it did not create, and replaces its own', () => {
    const other = join(tmp, 'not-ours');
    cpSync(join(repoRoot, 'test', 'fixtures', 'suites', 'blade-unseen'), other, { recursive: true });
    assert.throws(
      () => createTaskWorkspace(b, other),
      (e: unknown) => e instanceof LoupeInputError && /not empty/.test(e.message),
    );
    const ws = join(tmp, 'ws-twice');
    createTaskWorkspace(b, ws);
    writeFileSync(join(ws, 'scratch.txt'), 'x');
    createTaskWorkspace(b, ws);
    assert.ok(!existsSync(join(ws, 'scratch.txt')));
  });
});

describe('leakage guard: BLADE (annotations, MCQ keys)', async () => {
  const s = await loadSuite('blade', sharedData('blade', 'datasets'));
  const b = s.blocks.find((x) => x.id === 'hurricane')!;
  it('refuses annotations.csv and mcq_dataset.json by every path', () => {
    const g = createGuard(b);
    assert.deepEqual(g.files.map((f) => f.rel).sort(), ['data.csv', 'info.json']);
    for (const p of [
      'annotations.csv',
      'mcq_dataset.json',
      '../hurricane/annotations.csv',
      'data.csv/../annotations.csv',
      '../affairs/annotations.csv',
      '/etc/passwd',
    ]) {
      assert.throws(() => g.resolve(p), PathNotVisibleError, p);
    }
    for (const h of hiddenOf(b)) attack(b, h);
  });
  it('copy-mode workspace holds read-only copies of data.csv and info.json only; MCQ TASK.md has no key', async () => {
    const ws = join(tmp, 'ws-blade');
    const r = createTaskWorkspace(b, ws, { mode: 'copy' });
    assert.deepEqual(readdirSync(ws).sort(), ['.loupe-task.json', 'TASK.md', 'data.csv', 'info.json']);
    assert.equal(statSync(join(ws, 'data.csv')).mode & 0o777, 0o444);
    assert.equal(r.files.length, 2);
    assert.match(readFileSync(join(ws, 'TASK.md'), 'utf8'), /feminine names/);
    const mcq = (await loadSuite('blade-mcq', sharedData('blade', 'datasets'))).blocks.find(
      (x) => x.id === 'hurricane',
    )!;
    const md = taskMarkdown(mcq);
    assert.match(md, /LEAST justifiable/);
    assert.ok(!/correct/i.test(md));
  });
  it('drops a visible file that is a symlink to a hidden file', async () => {
    const root = join(tmp, 'blade-evil');
    cpSync(join(repoRoot, 'test', 'fixtures', 'suites', 'blade-unseen', 'datasets'), root, { recursive: true });
    rmSync(join(root, 'plants', 'data.csv'));
    symlinkSync(join(root, 'plants', 'annotations.csv'), join(root, 'plants', 'data.csv'));
    const ev = (await loadSuite('blade', root)).blocks.find((x) => x.id === 'plants')!;
    const g = createGuard(ev);
    assert.equal(g.isVisible('data.csv'), false);
    const ws = join(tmp, 'ws-evil');
    createTaskWorkspace(ev, ws);
    assert.ok(!existsSync(join(ws, 'data.csv')));
  });
});

describe('leakage guard: DDR (checklists) and AnalystBench (reference report, checklist)', async () => {
  it('DDR: qa.json is never reachable; the database is', async () => {
    const db = join(tmp, 'ddr.sqlite');
    const s = await loadSuite('ddr', sharedData('mimic-iv-demo'), {
      entities: 'patients.subject_id',
      database: db,
      metadataDir: sharedData('ddr', 'mimic'),
      tableFilter: (t) => t === 'hosp_patients',
    });
    const b = s.blocks[0]!;
    assert.ok(b.hidden.files.some((f) => f.endsWith('qa.json')));
    const g = createGuard(b);
    assert.equal(g.resolve('database.sqlite'), realpathSync(db));
    for (const h of hiddenOf(b)) attack(b, h);
    const ws = join(tmp, 'ws-ddr');
    createTaskWorkspace(b, ws);
    assert.deepEqual(readdirSync(ws).sort(), ['.loupe-task.json', 'TASK.md', 'database.sqlite']);
    assert.equal(
      lstatSync(join(ws, 'database.sqlite')).isSymbolicLink(),
      false,
      'a small database is copied (auto mode)',
    );
    assert.equal(statSync(join(ws, 'database.sqlite')).mode & 0o222, 0, 'read-only copy');
    createTaskWorkspace(b, ws, { copyLimitBytes: 0 });
    assert.equal(lstatSync(join(ws, 'database.sqlite')).isSymbolicLink(), true, 'above the limit it is linked');
    const task = readFileSync(join(ws, 'TASK.md'), 'utf8');
    assert.match(task, /Analyze patient 10000032/);
    assert.match(task, /### `hosp_patients` \(100 rows\)/);
    assert.match(task, /- `anchor_age` INTEGER: Patient's age in the anchor_year/);
    const withChecklist = (await loadSuite('ddr', sharedData('ddr', 'mimic'))).blocks[0]!;
    const md = taskMarkdown(withChecklist);
    for (const c of withChecklist.hidden.checklist!) {
      assert.ok(!md.includes(c.question) && !md.includes(c.answer), c.question);
    }
  });
  it('AnalystBench: the reference PDF, checklist and manifest are never reachable', async () => {
    const s = await loadSuite('analystbench', join(repoRoot, 'test', 'fixtures', 'suites', 'analystbench'), {
      env: { LOUPE_SHARED: sharedDir() },
    });
    const b = s.blocks[0]!;
    const hidden = hiddenOf(b);
    assert.equal(hidden.length, 3);
    for (const h of hidden) attack(b, h);
    const ws = join(tmp, 'ws-ab');
    createTaskWorkspace(b, ws);
    const real = new Set(walkReal(ws));
    for (const h of hidden) assert.ok(!real.has(realpathSync(h)));
    const md = readFileSync(join(ws, 'TASK.md'), 'utf8');
    assert.match(md, /report\.md/);
    assert.match(md, /Key findings/);
    assert.ok(!md.includes('40.3'));
  });
});

describe('suites: visible files that alias hidden ones are dropped at load time', () => {
  const base = join(tmp, 'alias-base');
  const root = join(tmp, 'alias-tasks');
  const manifest = (task: string, extra: Record<string, unknown>) =>
    JSON.stringify({ format: 'loupe-analystbench/1', task, instruction: 'Write it.', base, ...extra });

  it("drops a source that is a symlink to the reference report, and another task's checklist and manifests", async () => {
    for (const d of [join(base, 'secret'), join(base, 'pub'), join(root, 'a')]) mkdirpSync(d);
    writeFileSync(join(base, 'secret', 'report.pdf'), 'the published report');
    writeFileSync(join(base, 'pub', 'd.csv'), 'x\n1\n');
    symlinkSync(join('..', 'secret', 'report.pdf'), join(base, 'pub', 'innocent.pdf'));
    // Task a: its checklist lives next to its manifest, inside the suite root.
    writeFileSync(
      join(root, 'a', 'task.json'),
      manifest('a', { sources: ['pub/**'], reference: 'secret/report.pdf', checklist: 'checklist.json' }),
    );
    writeFileSync(join(root, 'a', 'checklist.json'), JSON.stringify(['Says the rate was 40.3%']));
    // Task b: a glob wide enough to take the whole suite folder (tasks, checklists, a broken manifest).
    writeFileSync(
      join(root, 'b.task.json'),
      JSON.stringify({
        format: 'loupe-analystbench/1',
        task: 'b',
        instruction: 'Write it.',
        base: tmp,
        sources: ['alias-base/pub/d.csv', 'alias-tasks/**'],
        reference: 'alias-base/secret/report.pdf',
      }),
    );
    writeFileSync(join(root, 'c.task.json'), '{"format": ');
    const s = await loadSuite('analystbench', root);
    const a = s.blocks.find((x) => x.id === 'a')!;
    const b = s.blocks.find((x) => x.id === 'b')!;
    const rels = (x: Block) => [...x.visible.data, ...x.visible.docs].map((f) => f.rel).sort();
    assert.deepEqual(rels(a), ['pub/d.csv']);
    assert.ok(
      a.problems.some((p) => p.startsWith(join(base, 'pub', 'innocent.pdf')) && p.includes('resolves to')),
      a.problems.join('\n'),
    );
    assert.deepEqual(rels(b), ['alias-base/pub/d.csv']);
    for (const f of ['a/checklist.json', 'a/task.json', 'c.task.json']) {
      assert.ok(
        b.problems.some((p) => p.startsWith(join(root, f))),
        `${f}: ${b.problems.join('\n')}`,
      );
    }
    // Nothing hidden reaches a task workspace.
    const ws = join(tmp, 'alias-ws');
    createTaskWorkspace(a, ws);
    const all = (d: string): string[] =>
      readdirSync(d, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? all(join(d, e.name)) : [join(d, e.name)],
      );
    for (const f of all(ws)) assert.doesNotMatch(readFileSync(f, 'utf8'), /the published report/, f);
  });

  it('drops a LongDA data file that is a symlink to benchmark.csv', async () => {
    const ld = join(tmp, 'alias-longda');
    mkdirpSync(join(ld, 'S1', 'data'));
    mkdirpSync(join(ld, 'S1', 'docs'));
    writeFileSync(
      join(ld, 'benchmark.csv'),
      'survey,source,internal_id,query,answer_structure,additional_info,answer\nS1,Pub,1,Q,single_number,,42\n',
    );
    writeFileSync(join(ld, 'S1', 'data', 'd.csv'), 'a\n1\n');
    writeFileSync(join(ld, 'S1', 'docs', 'doc.txt'), 'doc');
    symlinkSync(join('..', '..', 'benchmark.csv'), join(ld, 'S1', 'data', 'answers.csv'));
    const b = (await loadSuite('longda', ld)).blocks[0]!;
    assert.deepEqual(
      b.visible.data.map((f) => f.rel),
      ['data/d.csv'],
    );
    assert.equal(b.runnable, true);
  });
});

function mkdirpSync(d: string): void {
  mkdirSync(d, { recursive: true });
}
