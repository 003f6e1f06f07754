/**
 * Red team, issue 37: limits that hold for the kernel's whole life, not only while a cell runs. Each case is a real run
 * (scripted model, LongDA tool set's python tool, bubblewrap sandbox) whose agent code attacks one limit; each is
 * asserted on its outcome (bytes on disk, CPU seconds, processes alive), not on a message:
 *   1. a thread started in one cell keeps writing after the cell returned (quota 50 MiB);
 *   2. a thread spins between cells (no CPU may be used while the model thinks);
 *   3. 20,000 directories plus 20,000 empty files with 250-character names (quota 30 MiB);
 *   4. three child processes of ~300 MiB each under a 600 MiB memory budget.
 * The LongDA import allowlist has no `threading`: agent code takes it from `sys.modules`, as an adversary would.
 */
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type RunStore } from '../../../src/core/store/run-store.ts';
import { startBlockRun, type KernelSettings } from '../../../src/core/runs/runner.ts';
import { LlmClient } from '../../../src/core/agent/llm.ts';
import { loadLongda } from '../../../src/core/benchmarks/longda/load.ts';
import { findBubblewrap } from '../../../src/core/kernel/python-kernel.ts';
import { diskUsage } from '../../../src/core/util/disk-usage.ts';
import { call, startScriptedLlm, type ChatRequestBody } from '../../helpers/scripted-llm.ts';

const skip = !findBubblewrap() ? 'bubblewrap is not installed' : false;
const MiB = 1048576;

function makeSuite(): string {
  const root = mkdtempSync(join(tmpdir(), 'loupe-i37-suite-'));
  writeFileSync(
    join(root, 'benchmark.csv'),
    'survey,source,internal_id,query,answer_structure,additional_info,answer\nTOY,Toy Brief 1,1,What is the mean of x?,single_number,,42.4242\n',
  );
  mkdirSync(join(root, 'TOY', 'data'), { recursive: true });
  mkdirSync(join(root, 'TOY', 'docs'), { recursive: true });
  writeFileSync(join(root, 'TOY', 'data', 'toy.csv'), 'x\n1\n2\n');
  writeFileSync(join(root, 'TOY', 'docs', 'codebook.txt'), 'x: a number\n');
  return root;
}

/** The python observations of a run whose model sends `cells` (each after `gapMs` of "thinking"), then answers. */
async function attack(
  root: string,
  runsDir: string,
  store: RunStore,
  cells: { code: string; gapMs?: number }[],
  kernel: KernelSettings,
) {
  const obs: string[] = [];
  const lastTool = (req: ChatRequestBody) =>
    String([...req.messages].reverse().find((m) => m.role === 'tool')?.content ?? '');
  const script = [
    ...cells.map(({ code, gapMs }, i) => async (req: ChatRequestBody) => {
      if (i > 0) obs.push(lastTool(req));
      if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
      return { content: `cell ${i + 1}`, toolCalls: [call('python', { code })] };
    }),
    (req: ChatRequestBody) => {
      obs.push(lastTool(req));
      return { content: 'done', toolCalls: [call('answer', { query_id: '1', answer: 1.5 })] };
    },
    () => ({ content: 'done', toolCalls: [call('final_answer', { answer: 'done' })] }),
  ];
  const srv = await startScriptedLlm({ scriptFor: () => script });
  try {
    const suite = loadLongda(root);
    const block = suite.blocks[0]!;
    const res = await startBlockRun({
      store,
      suite,
      block,
      agent: 'llm',
      modelClient: new LlmClient({ baseUrl: srv.baseUrl, model: 'scripted' }),
      runsDir,
      kernel,
      docs: async () => {
        throw new Error('no docs index in this test');
      },
    });
    const run = (await store.getRun(res.runId))!;
    if (process.env.RT_DEBUG) console.log(JSON.stringify(obs, null, 1));
    return { obs, run, res, events: await store.getEvents(run.id) };
  } finally {
    await srv.close();
  }
}

describe('red team: kernel limits hold between cells and for the whole process tree (issue 37)', { skip }, () => {
  let store: RunStore;
  let root = '';
  let runsDir = '';
  before(() => {
    root = makeSuite();
    runsDir = mkdtempSync(join(tmpdir(), 'loupe-i37-runs-'));
    store = openStore(':memory:');
  });
  after(() => {
    store?.close();
    for (const d of [root, runsDir]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it('a thread that keeps writing after its cell returned is stopped before the quota is passed', async () => {
    // 150 files of 1 MiB at ~100 MiB/s: before issue 37 the thread wrote them all while the model "thought" for 2.5 s.
    const writer = [
      'import os, sys',
      'threading = sys.modules["threading"]',
      'os.makedirs("bg", exist_ok=True)',
      'def write():',
      '    for i in range(150):',
      '        with open("bg/f%03d" % i, "wb") as f:',
      '            f.write(b"x" * (1 << 20))',
      '        time.sleep(0.01)',
      'import time',
      'threading.Thread(target=write, daemon=True).start()',
      'print("writer started")',
    ].join('\n');
    const { obs, run, events } = await attack(
      root,
      runsDir,
      store,
      [{ code: writer }, { code: 'import os\nprint("files", len(os.listdir("bg")))', gapMs: 2500 }],
      { sandbox: 'bubblewrap', workspaceQuotaMb: 50 },
    );
    assert.match(obs[0]!, /writer started/);
    const bg = diskUsage(join(run.storedWorkspace, 'bg'));
    assert.ok(
      bg.bytes < 50 * MiB,
      `the thread wrote ${(bg.bytes / MiB).toFixed(1)} MiB after its cell, past the 50 MiB quota (${obs[1]})`,
    );
    // the run record says how the kernel is held between cells and how the quota is measured
    const limits = events.find((e) => e.kind === 'kernel-limits');
    assert.ok(limits, 'no kernel-limits event');
    assert.match(limits.message, /between cells/);
    assert.match(limits.message, /workspace quota 50 MiB/);
  });

  it('a spinning thread uses no CPU between cells', async () => {
    const spinner = [
      'import sys, time',
      'threading = sys.modules["threading"]',
      'def spin():',
      '    while True:',
      '        pass',
      'threading.Thread(target=spin, daemon=True).start()',
      't0 = time.process_time()',
      'print("spinning")',
    ].join('\n');
    // process_time: CPU of every thread of the kernel process; the gap is 2 s of model time
    const { obs } = await attack(
      root,
      runsDir,
      store,
      [{ code: spinner }, { code: 'print("idle cpu %.3f" % (time.process_time() - t0))', gapMs: 2000 }],
      { sandbox: 'bubblewrap' },
    );
    const m = /idle cpu ([\d.]+)/.exec(obs[1]!);
    assert.ok(m, obs[1]);
    // before issue 37: ~2.0 s (one core for the whole gap); frozen: what the thread gets in the few ms around a cell
    assert.ok(Number(m[1]) < 0.3, `the spinning thread used ${m[1]} s of CPU while no cell ran`);
  });

  it('20,000 directories and 20,000 empty files count against the quota', async () => {
    const many = [
      'import os',
      'os.makedirs("many", exist_ok=True)',
      'n = 0',
      'for i in range(20000):',
      '    os.mkdir("many/d%05d_%s" % (i, "x" * 243))',
      '    open("many/f%05d_%s" % (i, "y" * 243), "w").close()',
      '    n += 2',
      'print("made", n)',
    ].join('\n');
    const { obs, run } = await attack(root, runsDir, store, [{ code: many }], {
      sandbox: 'bubblewrap',
      workspaceQuotaMb: 30,
    });
    assert.doesNotMatch(obs[0]!, /made 40000/, 'all 40,000 entries were made under a 30 MiB quota');
    assert.match(obs[0]!, /quota/);
    const made = readdirSync(join(run.storedWorkspace, 'many')).length;
    // each entry costs ≥ one 4 KiB block plus its name: 30 MiB hold < 8,000 of them. How many more a cell adds before
    // the next 100 ms check depends on the machine's load (29,687 seen with the integration suite running beside it),
    // so the bound asserted is the one that needs no timing: the cell was stopped before it made all 40,000 (main made
    // all of them, counting none against the quota)
    assert.ok(made < 40_000, `${made} entries made under a 30 MiB quota`);
  });

  it('three children cannot together exceed the aggregate memory limit', async () => {
    // Each child is a fresh interpreter (~25 MiB) touching 300 MiB, then holding it 4 s; it marks its survival only
    // after that, so "survived" children held their memory at the same time. Before issue 37 the limit was per process
    // (RLIMIT_AS 600 MiB each) and all three survived: ~950 MiB together.
    const children = [
      'import os, sys',
      "code = \"import sys, time\\nb = b'1' * (300 << 20)\\ntime.sleep(4)\\nopen('survived_%s' % sys.argv[1], 'w').close()\\n\"",
      'pids = [os.spawnv(os.P_NOWAIT, sys.executable, [sys.executable, "-c", code, str(i)]) for i in range(3)]',
      'codes = [os.waitpid(p, 0)[1] for p in pids]',
      'print("survived", len([n for n in os.listdir(".") if n.startswith("survived_")]), "of 3; wait statuses", codes)',
    ].join('\n');
    const { obs } = await attack(root, runsDir, store, [{ code: children }], {
      sandbox: 'bubblewrap',
      memoryLimitMb: 600,
    });
    const m = /survived (\d) of 3/.exec(obs[0]!);
    if (m) assert.ok(Number(m[1]) < 3, `three children held ~300 MiB each at once under a 600 MiB budget: ${obs[0]}`);
    else assert.match(obs[0]!, /memory/, obs[0]);
    assert.match(obs[0]!, /memory limit/);
  });
});
