/**
 * The rough edges a new user hits (issue 28), each checked on the built CLI (`dist/cli.js`) as a user runs it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { progressPrinter } from '../../../src/cli/run.ts';
import { repoRoot, sharedData } from '../../helpers/shared.ts';

const CLI = join(repoRoot, 'dist', 'cli.js');
const LONGDA = sharedData('longda', 'benchmark');

function cli(
  args: string[],
  o: { cwd?: string; node?: string; env?: NodeJS.ProcessEnv } = {},
): { code: number | null; out: string; err: string } {
  const r = spawnSync(o.node ?? process.execPath, [CLI, ...args], {
    cwd: o.cwd ?? tmpdir(),
    env: { ...process.env, ...(o.env ?? {}) },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function toySuite(): string {
  const root = mkdtempSync(join(tmpdir(), 'loupe-toy-'));
  writeFileSync(
    join(root, 'benchmark.csv'),
    'survey,source,internal_id,query,answer_structure,additional_info,answer\nTOY,Toy Brief 1,1,What is the mean of x?,single_number,,42\n',
  );
  mkdirSync(join(root, 'TOY', 'data'), { recursive: true });
  mkdirSync(join(root, 'TOY', 'docs'), { recursive: true });
  writeFileSync(join(root, 'TOY', 'data', 'toy.csv'), 'x\n1\n');
  writeFileSync(join(root, 'TOY', 'docs', 'codebook.txt'), 'x: a number between 1 and 9\n');
  writeFileSync(join(root, 'TOY', 'docs', 'notes.docx'), 'PK\u0003\u0004 not really a docx');
  return root;
}

test('the built CLI exists (npm test builds it first)', () => {
  assert.ok(existsSync(CLI), `${CLI} missing: run npm run build`);
});

test(
  'an older Node gets a clear message, never a segmentation fault; doctor runs on it and reports it',
  {
    skip:
      !existsSync('/usr/bin/node') ||
      Number(spawnSync('/usr/bin/node', ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout) >=
        22
        ? 'no Node < 22 at /usr/bin/node'
        : false,
  },
  () => {
    const doctor = cli(['doctor'], { node: '/usr/bin/node' });
    assert.equal(doctor.code, 1, doctor.err);
    assert.match(doctor.out, /✘ Node ≥ 22: node v\d+.*Loupe needs Node ≥ 22.*bash \.ci\/setup/);
    assert.match(doctor.out, /Python with pandas/);
    const runs = cli(['runs'], { node: '/usr/bin/node' });
    assert.equal(runs.code, 1);
    assert.match(runs.err, /Loupe needs Node ≥ 22; this is v\d+/);
  },
);

test('a store that does not exist is an error for score, report and runs (no empty database is made); one default for all', () => {
  const dir = mkdtempSync(join(tmpdir(), 'loupe-store-'));
  try {
    for (const args of [
      ['score', '--store', 'mistyped.sqlite', '--all'],
      ['report', '--store', 'mistyped.sqlite'],
      ['runs', '--store', 'mistyped.sqlite'],
    ]) {
      const r = cli(args, { cwd: dir });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
      assert.match(r.err, /no run store at .*mistyped\.sqlite/);
      assert.equal(existsSync(join(dir, 'mistyped.sqlite')), false, `${args[0]} created the store`);
    }
    const d = cli(['runs'], { cwd: dir });
    assert.equal(d.code, 2);
    assert.match(d.err, /no run store at .*\.loupe\/runs\.sqlite \(the default\)/);
    // a postgres:// URL is a team store, never a path: nothing reachable at it is a clear error naming host and port
    const url = cli(['runs', '--store', 'postgres://x@127.0.0.1:1/db'], { cwd: dir });
    assert.equal(url.code, 1, url.err);
    assert.match(
      url.err,
      /postgres:\/\/x@127\.0\.0\.1:1\/db: cannot reach PostgreSQL at 127\.0\.0\.1:1 \(ECONNREFUSED\)/,
    );
    assert.equal(existsSync(join(dir, 'postgres:')), false);
    // a password written in the URL is refused and never echoed; other schemes are not stores
    const pw = cli(['runs', '--store', 'postgres://x:s3cret-pw@127.0.0.1:1/db'], { cwd: dir });
    assert.equal(pw.code, 2, pw.err);
    assert.match(
      pw.err,
      /postgres:\/\/x:\*\*\*@127\.0\.0\.1:1\/db: the password must not be written in the URL.*passwordEnv/,
    );
    assert.doesNotMatch(pw.err, /s3cret/);
    const other = cli(['runs', '--store', 'mysql://x@127.0.0.1/db'], { cwd: dir });
    assert.equal(other.code, 2);
    assert.match(other.err, /not a run store: give a SQLite file path or a postgres:\/\/ URL/);
    assert.equal(readdirSync(dir).length, 0, 'nothing created in the working folder');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('suite names in any case; "did you mean" for a mistyped flag, command or block id (nearest ids, no 27-id dump)', () => {
  const ok = cli(['blocks', '--suite', 'LongDA', '--root', LONGDA]);
  assert.equal(ok.code, 0, ok.err);
  const flag = cli(['blocks', '--suit', 'longda', '--root', LONGDA]);
  assert.equal(flag.code, 2);
  assert.match(flag.err, /unknown option '--suit'\. Did you mean '--suite'/);
  const cmd = cli(['blokcs']);
  assert.match(cmd.err, /Did you mean 'blocks'/);
  const block = cli([
    'run',
    '--suite',
    'longda',
    '--root',
    LONGDA,
    '--block',
    'NHANES_NCHS_Data_Brief_No._50',
    '--agent',
    'reference',
    '--store',
    join(mkdtempSync(join(tmpdir(), 'loupe-b-')), 's.sqlite'),
  ]);
  assert.equal(block.code, 2);
  assert.match(block.err, /Did you mean 'NHANES_NCHS_Data_Brief_No\._50\d'/);
  assert.doesNotMatch(block.err, /usage:/);
  assert.ok(block.err.length < 600, block.err);
});

test('--survey in any case; counts agree with their nouns; index does not count a skipped .docx as indexed', () => {
  const root = toySuite();
  const cache = mkdtempSync(join(tmpdir(), 'loupe-cache-'));
  try {
    const b = cli(['blocks', '--suite', 'longda', '--root', root]);
    assert.equal(b.code, 0, b.err);
    assert.match(b.out, /1 block, 1 item, 1 runnable/);
    assert.match(b.out, / 1 item\b/);
    const idx = cli(['index', '--root', root, '--survey', 'toy', '--cache', cache]);
    assert.equal(idx.code, 0, idx.err);
    assert.match(idx.out, /1 file indexed \(1 skipped\)/);
    const s = cli(['search', '--root', root, '--survey', 'toy', '--cache', cache, 'number']);
    assert.equal(s.code, 0, s.err);
    assert.match(s.out, /codebook\.txt/);
  } finally {
    rmSync(root, { recursive: true, force: true });
    rmSync(cache, { recursive: true, force: true });
  }
});

test('demo with an unreachable model shows its retries as they happen', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'loupe-demo-'));
  const c = spawn(process.execPath, [CLI, 'demo', '--store', join(dir, 's.sqlite')], {
    cwd: dir,
    env: {
      ...process.env,
      LOUPE_SHARED: join(LONGDA, '..', '..', '..'),
      LOUPE_MODEL: 'm',
      LOUPE_BASE_URL: 'http://127.0.0.1:9/v1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  c.stderr.on('data', (b: Buffer) => {
    err += b.toString();
  });
  for (let i = 0; i < 100 && !/model retry 1/.test(err); i++) await new Promise((r) => setTimeout(r, 100));
  c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
  assert.match(err, /model retry 1 in \d+ ms: cannot reach http:\/\/127\.0\.0\.1:9\/v1/);
});

test('a rejected BLADE submission prints its reason on the progress line, not an empty "Submission rejected:"', () => {
  let err = '';
  const p = progressPrinter(
    {
      out: () => {},
      err: (s) => {
        err += s;
      },
      env: {},
      cwd: '/',
    },
    'amtl',
  );
  p({
    type: 'observation',
    runId: 'r',
    step: 3,
    callId: 'c',
    name: 'submit_analysis',
    isError: true,
    observation:
      "Submission rejected:\n- PatsyError: Error evaluating factor: NameError: name 'agee' is not defined\nFix the problem and call submit_analysis again.",
  } as never);
  assert.match(
    err,
    /✘ Submission rejected: - PatsyError: Error evaluating factor: NameError: name 'agee' is not defined/,
  );
});

test(
  'run --blocks all on BLADE: blocks the agent cannot run are skipped with the reason; exit 0 when every runnable block ran',
  { timeout: 180_000 },
  async () => {
    const { cpSync } = await import('node:fs');
    const root = mkdtempSync(join(tmpdir(), 'loupe-blade-all-'));
    try {
      for (const d of ['toy', 'hurricane']) {
        cpSync(sharedData('blade', 'datasets', d), join(root, d), { recursive: true });
      }
      const r = cli(
        [
          'run',
          '--suite',
          'BLADE',
          '--root',
          root,
          '--blocks',
          'all',
          '--agent',
          'reference',
          '--store',
          join(root, 's.sqlite'),
        ],
        { cwd: root },
      );
      assert.match(r.err, /skipped toy: .*no annotations\.csv/);
      assert.match(r.err, /1 block\(s\) skipped: the reference agent cannot run them \(toy\)/);
      assert.equal(r.code, 0, r.err);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  },
);

test('the shipped CLI extracts documentation in worker threads (dist/extract-worker.js), with the same index as in one thread', () => {
  assert.ok(existsSync(join(repoRoot, 'dist', 'extract-worker.js')), 'the build ships the extraction worker');
  const root = toySuite();
  try {
    const one = cli([
      'index',
      '--root',
      root,
      '--survey',
      'TOY',
      '--cache',
      mkdtempSync(join(tmpdir(), 'loupe-w1-')),
      '--workers',
      '1',
      '--json',
    ]);
    const two = cli([
      'index',
      '--root',
      root,
      '--survey',
      'TOY',
      '--cache',
      mkdtempSync(join(tmpdir(), 'loupe-w2-')),
      '--workers',
      '2',
      '--json',
    ]);
    assert.equal(two.code, 0, two.err);
    const pick = (o: string) => {
      const j = JSON.parse(o) as { units: number; chunks: number; skipped: unknown[] };
      return [j.units, j.chunks, j.skipped.length];
    };
    assert.deepEqual(pick(two.out), pick(one.out));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
