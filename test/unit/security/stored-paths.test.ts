/**
 * Issue 36 "A path read from the store is never trusted": a colleague with write access to the team store (a second
 * login role granted table rights, as `test/helpers/pg.ts` makes it) or a crafted SQLite file brought in with
 * `loupe store copy` sets a run's recorded workspace to a folder of this machine outside the runs folder (`/home/you`).
 * Scoring (`loupe score`) and exporting (`loupe runs --results/--trajectory`) that run must bring nothing of that
 * folder into the store, the judge's requests or the export, and the run's events say why.
 *
 * Uses only the CLI and SQL (no API introduced by the fix), so the same file runs against the code before the fix
 * (where it fails: the secret is captured into `run_artefacts`, sent to the judge and exported).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { main } from '../../../src/cli/main.ts';
import { openStore } from '../../../src/core/store/run-store.ts';
import { openStoreAt } from '../../../src/core/store/open.ts';
import type { RunStore } from '../../../src/core/store/types.ts';
import { writeAnalystbenchDemo } from '../../helpers/fixtures.ts';
import { startPg, type PgServer } from '../../helpers/pg.ts';
import { startScriptedLlm, type ChatRequestBody, type ScriptedLlm } from '../../helpers/scripted-llm.ts';

const SECRET = 'BEGIN-OPENSSH-PRIVATE-KEY-c0ffee-do-not-leak';
const needles = [SECRET, Buffer.from(SECRET).toString('hex'), Buffer.from(SECRET).toString('base64')];
const leaks = (text: string): boolean => needles.some((n) => text.includes(n));

/**
 * Every attempt of a test is checked (not only the first that fails), so a run reports which channels leaked:
 * `check(ok, what)` records, `held()` asserts at the end. Figures for the note: attempts = checks made.
 */
function attempts(): { check: (ok: boolean, what: string) => void; held: () => void } {
  const failed: string[] = [];
  let n = 0;
  return {
    check: (ok, what) => {
      n++;
      if (!ok) failed.push(what);
    },
    held: () => {
      if (process.env.LOUPE_RT_COUNT) console.log(`[attempts] ${n - failed.length}/${n} contained`);
      assert.deepEqual(failed, [], `${failed.length} of ${n} attempts not contained`);
    },
  };
}

/** A judge endpoint that answers every AnalystBench judge task (what it is sent is checked for the secret). */
function judgeReply(req: ChatRequestBody): { content: string } {
  const sys = req.messages.find((m) => m.role === 'system')?.content ?? '';
  if (/grade a written analysis/.test(sys)) return { content: JSON.stringify({ score: 3, reason: 'ok' }) };
  if (/atomic factual claims/.test(sys)) return { content: JSON.stringify({ claims: [] }) };
  if (/verify one factual claim/.test(sys)) return { content: JSON.stringify({ supported: true, reason: 'ok' }) };
  if (/rate a figure/.test(sys)) {
    return {
      content: JSON.stringify({ readability: 3, groundedness: 3, task_utility: 3, reproducibility: 3, reason: 'ok' }),
    };
  }
  return { content: '{}' };
}

let dir = '';
let suiteRoot = '';
let blockId = '';
let home = '';
let llm: ScriptedLlm;
let srv: PgServer;

/** The victim's folder: a report-shaped file, a key, a figure, and the blob a crafted step row points at. */
function plantHome(): string {
  const h = join(dir, 'home-you');
  mkdirSync(join(h, 'ws', 'figures'), { recursive: true });
  mkdirSync(join(h, 'ws', '.ssh'), { recursive: true });
  mkdirSync(join(h, 'blobs'), { recursive: true });
  writeFileSync(join(h, 'ws', 'report.md'), `# Notes\n\n${SECRET}\n\n![x](figures/a.png)\n`);
  writeFileSync(join(h, 'ws', '.ssh', 'id_rsa'), `${SECRET}\n`);
  writeFileSync(
    join(h, 'ws', 'figures', 'a.png'),
    Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.from(SECRET)]),
  );
  writeFileSync(join(h, 'blobs', createHash('sha256').update(SECRET).digest('hex')), SECRET);
  return join(h, 'ws');
}

const analystState = JSON.stringify({
  analyst: { input: 'toc', figures: [], report: { path: 'report.md', chars: 10, figures: ['figures/a.png'] } },
});
const newRun = (id: string, workspace: string) => ({
  id,
  suite: 'analystbench',
  blockId,
  agent: 'llm',
  model: 'writer',
  params: { suiteRoot },
  promptHash: 'h',
  toolSet: 'analystbench-toc',
  dataChecksums: {},
  loupeVersion: 't',
  sandbox: 'off',
  workspace,
  status: 'finished' as const,
});

const io = (cwd: string) => {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: {
      out: (s: string) => out.push(s),
      err: (s: string) => err.push(s),
      env: { ...process.env, JUDGE_KEY: 'k' },
      cwd,
    },
  };
};

/** Scores the run with `loupe score` (LLM judge) and exports it with `loupe runs --results --trajectory`. */
async function scoreAndExport(
  store: string,
  runId: string,
  cwd: string,
): Promise<{ exported: string; output: string }> {
  const t = io(cwd);
  const code = await main(
    [
      'score',
      '--store',
      store,
      '--run',
      runId,
      '--judge',
      'llm',
      '--judge-model',
      'j',
      '--judge-base-url',
      llm.baseUrl,
      '--judge-api-key-env',
      'JUDGE_KEY',
      '--json',
    ],
    t.io,
  );
  assert.ok(code === 0 || code === 1, t.err.join(''));
  const exported = mkdtempSync(join(dir, 'export-'));
  const t2 = io(cwd);
  await main(
    [
      'runs',
      '--store',
      store,
      '--run',
      runId,
      '--results',
      join(exported, 'results'),
      '--trajectory',
      join(exported, 'traj'),
    ],
    t2.io,
  );
  return { exported, output: [...t.out, ...t.err, ...t2.out, ...t2.err].join('') };
}

/** Every file under `d`, as text (binary read as latin1). */
function treeText(d: string): string {
  let s = '';
  for (const e of readdirSync(d, { withFileTypes: true, recursive: true })) {
    const p = join(e.parentPath, e.name);
    if (statSync(p).isFile()) s += `${p}\n${readFileSync(p).toString('latin1')}\n`;
  }
  return s;
}

/** Every row of every table of a SQLite file, as text (blobs as latin1 and hex). */
function sqliteDump(file: string): string {
  const db = new Database(file, { readonly: true });
  try {
    const tables = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>
    ).map((r) => r.name);
    return tables
      .map((t) =>
        (db.prepare(`SELECT * FROM "${t}"`).all() as Array<Record<string, unknown>>)
          .map((r) =>
            Object.values(r)
              .map((v) => (Buffer.isBuffer(v) ? `${v.toString('latin1')} ${v.toString('hex')}` : String(v)))
              .join('|'),
          )
          .join('\n'),
      )
      .join('\n');
  } finally {
    db.close();
  }
}

/** Every row of every table of a PostgreSQL database, as text (bytea as hex, which `needles` covers). */
async function pgDump(url: string): Promise<string> {
  const db = new URL(url).pathname.slice(1);
  const c = new pg.Client({
    host: srv.host,
    port: srv.port,
    user: srv.user,
    password: process.env[srv.passwordEnv],
    database: db,
  });
  await c.connect();
  try {
    const tables = (
      await c.query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")
    ).rows.map((r: { table_name: string }) => r.table_name);
    let s = '';
    for (const t of tables) {
      s += (await c.query(`SELECT row_to_json(x)::text AS j FROM "${t}" x`)).rows
        .map((r: { j: string }) => r.j)
        .join('\n');
    }
    return s;
  } finally {
    await c.end();
  }
}

async function refusedEvent(store: RunStore, runId: string): Promise<string | undefined> {
  return (await store.getEvents(runId))
    .map((e) => e.message)
    .find((m) => m.includes(home) && /outside the runs folder/.test(m) && /store's copy/.test(m));
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-stored-paths-'));
  suiteRoot = writeAnalystbenchDemo(join(dir, 'suite'));
  blockId = 'demo';
  home = plantHome();
  llm = await startScriptedLlm({ script: [(req) => judgeReply(req)] });
  srv = await startPg({ fsync: 'off' });
});
after(async () => {
  await llm.close();
  srv.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('a run workspace rewritten in the store to a folder outside the runs folder (issue 36)', () => {
  it('SQLite: loupe score and loupe runs --results/--trajectory take nothing from it; the run event says why', async () => {
    const storeFile = join(dir, 'sq', 'runs.sqlite');
    const s = openStore(storeFile);
    await s.createRun(newRun('ab1', join(dir, 'sq', 'runs', 'ab1', 'workspace')));
    s.close();
    // the attacker edits the file (a colleague's copy, a crafted file)
    const db = new Database(storeFile);
    db.prepare('UPDATE runs SET workspace = ?, state = ? WHERE id = ?').run(home, analystState, 'ab1');
    db.close();
    const a = attempts();
    const before = llm.requests.length;
    const { exported, output } = await scoreAndExport(storeFile, 'ab1', dir);
    a.check(
      !leaks(sqliteDump(storeFile)),
      'the secret entered the store (run_artefacts, scores, judgements or events)',
    );
    a.check(!llm.requests.slice(before).some((r) => leaks(JSON.stringify(r.body))), 'the secret was sent to the judge');
    a.check(!leaks(treeText(exported)), 'the secret was exported');
    a.check(!leaks(output), 'the secret was printed');
    const st = openStore(storeFile);
    try {
      a.check(!!(await refusedEvent(st, 'ab1')), `no event says why: ${JSON.stringify(await st.getEvents('ab1'))}`);
    } finally {
      st.close();
    }
    a.check(readFileSync(join(home, '.ssh', 'id_rsa'), 'utf8') === `${SECRET}\n`, 'the host folder changed');
    // resuming or replaying it would drive the agent in that folder: refused, in the CLI's terms
    const d2 = new Database(storeFile);
    d2.prepare("UPDATE runs SET status = 'failed' WHERE id = ?").run('ab1');
    d2.close();
    const before2 = readdirSync(home).sort();
    for (const args of [
      ['run', '--store', storeFile, '--resume', 'ab1', '--sandbox', 'off'],
      ['run', '--store', storeFile, '--agent', 'replay', '--run', 'ab1', '--sandbox', 'off'],
    ]) {
      const t = io(dir);
      const code = await main(args, t.io);
      a.check(
        code === 2 &&
          /workspace .*home-you\/ws is outside the runs folder .*; it is not (resumed|replayed) \(.*the runs folder of --store\)/.test(
            t.err.join(''),
          ),
        `${args.join(' ')} was not refused in CLI terms: ${code} ${t.err.join('').slice(0, 300)}`,
      );
    }
    a.check(
      JSON.stringify(readdirSync(home).sort()) === JSON.stringify(before2),
      'something was written into the folder',
    );
    a.held();
  });

  it('PostgreSQL: a second login role rewrites it; loupe score and the export take nothing from it', async () => {
    const url = await srv.createDatabase(`loupe_sp${process.pid}`);
    const owner = await openStoreAt(url);
    const cwd = join(dir, 'pgcwd');
    mkdirSync(cwd, { recursive: true });
    await owner.createRun(newRun('pg1', join(cwd, '.loupe', 'runs', 'pg1', 'workspace')));
    await owner.close();
    // the colleague: its own login, granted read/write on the tables (not their owner)
    const colleague = new URL(await srv.createRole(`colleague${process.pid}`, new URL(url).pathname.slice(1)));
    const c = new pg.Client({
      host: srv.host,
      port: srv.port,
      user: decodeURIComponent(colleague.username),
      password: process.env[srv.passwordEnv],
      database: colleague.pathname.slice(1),
    });
    await c.connect();
    try {
      const r = await c.query('UPDATE runs SET workspace = $1, state = $2 WHERE id = $3', [home, analystState, 'pg1']);
      assert.equal(r.rowCount, 1);
    } finally {
      await c.end();
    }
    const a = attempts();
    const before = llm.requests.length;
    const { exported, output } = await scoreAndExport(url, 'pg1', cwd);
    a.check(!leaks(await pgDump(url)), 'the secret entered the team store');
    a.check(!llm.requests.slice(before).some((q) => leaks(JSON.stringify(q.body))), 'the secret was sent to the judge');
    a.check(!leaks(treeText(exported)), 'the secret was exported');
    a.check(!leaks(output), 'the secret was printed');
    const st = await openStoreAt(url);
    try {
      a.check(!!(await refusedEvent(st, 'pg1')), `no event says why: ${JSON.stringify(await st.getEvents('pg1'))}`);
    } finally {
      await st.close();
    }
    a.held();
  });

  it('a crafted SQLite store brought in with loupe store copy: neither the copy (blobs) nor a later score reads the folder', async () => {
    const crafted = join(dir, 'crafted', 'runs.sqlite');
    const s = openStore(crafted);
    await s.createRun(newRun('cr1', home));
    await s.commitStep({
      runId: 'cr1',
      index: 0,
      startedAt: '2026-01-01T00:00:00Z',
      endedAt: '2026-01-01T00:00:01Z',
      latencyMs: 1,
      toolMs: 1,
      assistant: {
        role: 'assistant',
        content: 'look',
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'python', arguments: '{"code":"1"}' } }],
      },
      toolCalls: [
        {
          id: 'c',
          name: 'python',
          argumentsText: '{"code":"1"}',
          observation: 'short',
          isError: false,
          truncated: false,
          durationMs: 1,
        },
      ],
      extraMessages: [],
      usage: { input: 1, output: 1, cached: 0 },
      costUsd: null,
      finishReason: 'tool_calls',
    });
    s.close();
    // the step's observation points at a "blob" of the run folder, i.e. <dirname(workspace)>/blobs/<sha256>
    const db = new Database(crafted);
    const sha = createHash('sha256').update(SECRET).digest('hex');
    db.prepare('UPDATE steps SET tool_calls = ? WHERE run_id = ?').run(
      JSON.stringify([
        {
          id: 'c',
          name: 'python',
          argumentsText: '{"code":"1"}',
          observation: `\u0000loupe-blob:${sha}:${SECRET.length}`,
          isError: false,
          truncated: false,
          durationMs: 1,
        },
      ]),
      'cr1',
    );
    db.prepare('UPDATE runs SET state = ? WHERE id = ?').run(analystState, 'cr1');
    db.close();
    // into the team store (long texts are inlined from blobs on the way)
    const a = attempts();
    const url = await srv.createDatabase(`loupe_cp${process.pid}`);
    const t = io(dir);
    assert.equal(await main(['store', 'copy', '--from', crafted, '--to', url], t.io), 0, t.err.join(''));
    a.check(!leaks(await pgDump(url)), 'the copy read a blob from the folder the crafted store names');
    // into this user's own SQLite store, then scored and exported there
    const mine = join(dir, 'mine', 'runs.sqlite');
    const t2 = io(dir);
    assert.equal(await main(['store', 'copy', '--from', crafted, '--to', mine], t2.io), 0, t2.err.join(''));
    const before = llm.requests.length;
    const { exported, output } = await scoreAndExport(mine, 'cr1', dir);
    a.check(!leaks(sqliteDump(mine)), 'the secret entered the store');
    a.check(!llm.requests.slice(before).some((q) => leaks(JSON.stringify(q.body))), 'the secret was sent to the judge');
    a.check(!leaks(treeText(exported)), 'the secret was exported');
    a.check(!leaks(output), 'the secret was printed');
    const st = openStore(mine);
    try {
      a.check(!!(await refusedEvent(st, 'cr1')), 'no event says why');
      a.check(!leaks(JSON.stringify(await st.getSteps('cr1'))), 'reading the steps followed the blob path');
    } finally {
      st.close();
    }
    a.held();
  });
});
