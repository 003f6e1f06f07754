/** Issue 45: Inspect AI logs import into the run store — every real log of shared/data/inspect-logs, both containers. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main } from '../../../../../src/cli/main.ts';
import { importInspectLog } from '../../../../../src/core/runs/inspect/import.ts';
import {
  readInspectLog,
  type InspectMessage,
  type InspectSample,
} from '../../../../../src/core/runs/inspect/read-log.ts';
import { openStore } from '../../../../../src/core/store/run-store.ts';
import type { RunStore } from '../../../../../src/core/store/types.ts';
import { LoupeInputError } from '../../../../../src/core/util/errors.ts';
import { sharedData } from '../../../../helpers/shared.ts';

const DIR = sharedData('inspect-logs');
const LOGS = readdirSync(DIR)
  .filter((f) => /\.(eval|json)$/.test(f))
  .sort();

/** Expected steps of a sample, counted independently of the importer: one per assistant message, plus one per tool message answering no earlier assistant's call. */
function expectedSteps(msgs: InspectMessage[]): { steps: number; toolCalls: number; toolErrors: number } {
  const calls = new Set<string>();
  let steps = 0;
  let toolCalls = 0;
  let toolErrors = 0;
  for (const m of msgs) {
    if (m.role === 'assistant') {
      steps++;
      for (const c of m.tool_calls ?? []) {
        calls.add(c.id);
        toolCalls++;
      }
    } else if (m.role === 'tool') {
      if (m.error) toolErrors++;
      if (!m.tool_call_id || !calls.delete(m.tool_call_id)) {
        steps++;
        toolCalls++;
      }
    }
  }
  return { steps, toolCalls, toolErrors };
}

async function samplesOf(file: string): Promise<InspectSample[]> {
  const out: InspectSample[] = [];
  await readInspectLog(
    file,
    async () => {},
    async (s) => {
      out.push(s);
    },
  );
  return out;
}

describe('Inspect log import (real logs)', () => {
  let tmp: string;
  let store: RunStore;
  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'loupe-inspect-'));
    store = await openStore(join(tmp, 'runs.sqlite'));
  });
  after(async () => {
    await store.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('finds both containers among the shared logs', () => {
    assert.ok(LOGS.some((f) => f.endsWith('.eval')) && LOGS.some((f) => f.endsWith('.json')), LOGS.join(', '));
  });

  for (const name of LOGS) {
    it(`${name}: every sample × epoch is a run with its steps, tool calls, errors and scores`, async () => {
      const file = join(DIR, name);
      const samples = await samplesOf(file);
      assert.ok(samples.length > 0);
      const r = await importInspectLog(store, file, { runsRoot: join(tmp, 'runs') });
      assert.equal(r.imported.length, samples.length);
      assert.equal(new Set(r.imported).size, samples.length, 'one run per sample × epoch');
      for (const [i, s] of samples.entries()) {
        const run = (await store.getRun(r.imported[i]!))!;
        assert.equal(run.suite, `inspect:${r.task}`);
        assert.equal(run.blockId, String(s.id));
        assert.equal(run.params.repeat, s.epoch);
        assert.equal(run.status, s.error ? 'failed' : 'finished');
        const prov = run.params.inspect as Record<string, unknown>;
        assert.equal(prov.logFile, file);
        assert.deepEqual(prov.target, s.target ?? null);
        assert.deepEqual(prov.input, s.input);
        const want = expectedSteps(s.messages);
        const steps = await store.getSteps(run.id);
        assert.equal(steps.length, want.steps, 'steps = assistant messages + unanswered tool messages');
        assert.equal(steps.flatMap((x) => x.toolCalls).length, want.toolCalls);
        assert.equal(steps.flatMap((x) => x.toolCalls).filter((c) => c.isError).length, want.toolErrors);
        // assistant text in order
        const texts = s.messages
          .filter((m) => m.role === 'assistant')
          .map((m) =>
            typeof m.content === 'string'
              ? m.content
              : m.content
                  .filter((p) => p.type === 'text')
                  .map((p) => p.text)
                  .join('\n'),
          );
        assert.deepEqual(
          steps.filter((x) => x.assistant.content !== null).map((x) => x.assistant.content),
          texts,
        );
        const scores = await store.scores.list(run.id);
        assert.deepEqual(
          scores.map((x) => x.judgeId).sort(),
          Object.keys(s.scores ?? {})
            .map((k) => `inspect:${k}`)
            .sort(),
        );
        for (const sc of scores) assert.deepEqual(sc.summary.value, s.scores![String(sc.options.scorer)]!.value);
        const used = Object.values(s.model_usage ?? {}).reduce(
          (a, u) => a + (u.input_tokens ?? 0) + (u.output_tokens ?? 0),
          0,
        );
        if (used) assert.equal((run.tokens?.input ?? 0) + (run.tokens?.output ?? 0), used, 'token use kept');
      }
    });
  }

  it('a tool error keeps its type and message (log_tool_call_error.json)', async () => {
    const r = await importInspectLog(store, join(DIR, 'log_tool_call_error.json'), { runsRoot: tmp });
    const id = [...r.imported, ...r.skipped][0]!;
    const calls = (await store.getSteps(id)).flatMap((s) => s.toolCalls);
    assert.equal(calls.filter((c) => c.isError).length, 11);
    assert.match(calls[10]!.observation, /\[error output_limit: The tool output limit of 10 MiB was exceeded\.\]/);
  });

  it('images are kept as artefacts, the attachment resolved (log_images.json)', async () => {
    const r = await importInspectLog(store, join(DIR, 'log_images.json'), { runsRoot: tmp });
    const id = [...r.imported, ...r.skipped][0]!;
    const arts = await store.artefacts.list(id);
    assert.equal(arts.length, 1);
    assert.match(arts[0]!.mediaType, /^image\//);
    const got = (await store.artefacts.get(id, arts[0]!.path))!;
    assert.ok(got.bytes.length > 100);
    const prompt = ((await store.getRun(id))!.params.inspect as { prompt: Array<{ content: string }> }).prompt;
    assert.ok(
      prompt.some((m) => m.content.includes(`[image: ${arts[0]!.path}]`)),
      JSON.stringify(prompt).slice(0, 300),
    );
    assert.ok(!JSON.stringify(prompt).includes('attachment://'));
  });

  it('importing the same logs twice adds nothing (CLI, folder)', async () => {
    const st = join(tmp, 'cli.sqlite');
    const out: string[] = [];
    const io = { out: (s: string) => out.push(s), err: (s: string) => out.push(s), env: process.env, cwd: tmp };
    assert.equal(await main(['import', 'inspect', DIR, '--store', st, '--json'], io), 0, out.join(''));
    const first = JSON.parse(out.pop()!) as Array<{ imported: string[]; skipped: string[] }>;
    assert.equal(first.length, LOGS.length);
    const n = first.reduce((a, r) => a + r.imported.length, 0);
    assert.ok(n >= LOGS.length);
    assert.equal(await main(['import', 'inspect', DIR, '--store', st, '--json'], io), 0, out.join(''));
    const second = JSON.parse(out.pop()!) as Array<{ imported: string[]; skipped: string[] }>;
    assert.equal(
      second.reduce((a, r) => a + r.imported.length, 0),
      0,
    );
    assert.equal(
      second.reduce((a, r) => a + r.skipped.length, 0),
      n,
    );
    const s2 = await openStore(st);
    try {
      assert.equal((await s2.listRuns()).length, n);
    } finally {
      await s2.close();
    }
  });

  it('a corrupt sample member is refused naming the member and field; runs already read stay', async () => {
    const work = join(tmp, 'corrupt');
    execFileSync('mkdir', ['-p', work]);
    execFileSync('unzip', ['-q', join(DIR, 'log_streaming.eval'), '-d', work]);
    const member = join(work, 'samples', '2_epoch_1.json');
    const s = JSON.parse(readFileSync(member, 'utf8'));
    s.messages[1].role = 'wizard';
    writeFileSync(member, JSON.stringify(s));
    const bad = join(tmp, 'bad.eval');
    execFileSync('zip', ['-q', '-r', bad, '.'], { cwd: work });
    const st = await openStore(join(tmp, 'corrupt.sqlite'));
    try {
      await assert.rejects(
        importInspectLog(st, bad, { runsRoot: tmp }),
        (e: Error) =>
          e instanceof LoupeInputError &&
          /samples\/2_epoch_1\.json: messages\[1\]\.role/.test(e.message) &&
          /wizard/.test(e.message),
      );
      assert.equal((await st.listRuns()).length, 2, 'the samples of id 1 were imported before the corrupt one');
      // truncated JSON in a member
      writeFileSync(member, '{"id": 2, "epoch": 1, "messages": [');
      const bad2 = join(tmp, 'bad2.eval');
      execFileSync('zip', ['-q', '-r', bad2, '.'], { cwd: work });
      await assert.rejects(importInspectLog(st, bad2, { runsRoot: tmp }), /samples\/2_epoch_1\.json.*not valid JSON/);
      // a .json log with a bad field
      const j = JSON.parse(readFileSync(join(DIR, 'log_formats.json'), 'utf8'));
      j.samples[0].epoch = 'one';
      const bj = join(tmp, 'bad.json');
      writeFileSync(bj, JSON.stringify(j));
      await assert.rejects(importInspectLog(st, bj, { runsRoot: tmp }), /samples\[0\]: epoch/);
      // not a zip at all
      const nz = join(tmp, 'nz.eval');
      copyFileSync(join(DIR, 'log_formats.json'), nz);
      await assert.rejects(importInspectLog(st, nz, { runsRoot: tmp }), /nz\.eval.*not a readable \.eval zip/);
    } finally {
      await st.close();
    }
  });
});
