/**
 * Model × question matrix perf (issue 43): LongDA's size — 474 queries in 27 publications (blocks) — × 6 run profiles
 * × 3 repeats (486 scored runs, each with 6 steps, one answer record per query, a tool error in every 10th run), in a
 * SQLite store built through the store API.
 *  - subject: what the panel does when it opens, host time: open the store, `loadMatrix` (runs, scores, item
 *    outcomes through the benchmark's definition, answer steps, tool errors) and `matrixView` (flags, counts, means),
 *    close.
 *  - baseline (paired, same run): reading the same scores straight from SQLite with better-sqlite3 — open, `SELECT
 *    run_id, detail FROM scores`, `JSON.parse` each detail, close.
 * Goal: subject ≤ 500 ms (absolute gate, issue 43); the baseline is printed beside it. Baseline and subject alternate,
 * 5 rounds each in this process, the first round counted (no warm-up); medians reported.
 * Usage: node test/perf/matrix.perf.ts   (exit 1 on a FAIL)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadMatrix, matrixView } from '../../src/app/matrix/matrix.ts';
import { openStore } from '../../src/core/store/run-store.ts';
import { seededRandom } from '../../src/core/util/random.ts';
import { verdict } from './verdict.ts';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3') as typeof import('better-sqlite3');

const ITEMS = 474;
const BLOCKS = 27;
const PROFILES = 6;
const REPEATS = 3;
const STEPS = 6;
const ROUNDS = 5;
const GOAL_MS = 500;

const dir = mkdtempSync(join(tmpdir(), 'loupe-matrix-perf-'));
const storeFile = join(dir, 'runs.sqlite');
try {
  const perBlock = Array.from({ length: BLOCKS }, (_, b) => Math.floor(ITEMS / BLOCKS) + (b < ITEMS % BLOCKS ? 1 : 0));
  const rand = seededRandom(43);
  const built = performance.now();
  const store = openStore(storeFile);
  let n = 0;
  for (let p = 0; p < PROFILES; p++) {
    const model = `model-${p}`;
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
        const q = perBlock[bi]!;
        for (let s = 0; s < STEPS; s++) {
          const isError = n % 10 === 0 && s === 1;
          const answers = Array.from({ length: q }, (_, k) => k)
            .filter((k) => k % STEPS === s)
            .map((k) => ({ runId: id, queryId: `q${k}`, answer: k, raw: String(k), stepIndex: s }));
          await store.commitStep(
            {
              runId: id,
              index: s,
              startedAt: new Date().toISOString(),
              endedAt: new Date().toISOString(),
              latencyMs: 1,
              toolMs: 1,
              usage: { input: 100, output: 10 },
              costUsd: null,
              finishReason: 'tool_calls',
              extraMessages: [],
              assistant: {
                role: 'assistant',
                content: 'working',
                tool_calls: [{ id: `c${s}`, type: 'function', function: { name: 'python', arguments: '{}' } }],
              },
              toolCalls: [
                {
                  id: `c${s}`,
                  name: 'python',
                  argumentsText: '{}',
                  observation: isError ? 'Traceback' : 'ok',
                  isError,
                  truncated: false,
                  durationMs: 1,
                },
              ],
            } as never,
            { answers } as never,
          );
        }
        await store.updateRun(id, { status: 'finished', steps: STEPS } as never);
        const rows = Array.from({ length: q }, (_, k) => {
          const match = rand() < 0.3 + 0.1 * p ? 1 : 0;
          return {
            qId: `q${k}`,
            survey: 'NHANES',
            source: blockId,
            internalId: k,
            answerStructure: 'single',
            rawAnswer: String(match),
            match,
            given: match,
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
    }
  }
  await store.close();
  console.log(
    `store: ${n} scored runs (${ITEMS} items × ${PROFILES} profiles × ${REPEATS} repeats, ${STEPS} steps each) built in ${(performance.now() - built).toFixed(0)} ms`,
  );

  let shown: { rows: number; columns: number; dots: number; counts: unknown } | null = null;
  async function subject(): Promise<number> {
    const t0 = performance.now();
    const s = openStore(storeFile);
    const v = matrixView(await loadMatrix(s, { suite: 'longda' }), { blind: true });
    await s.close();
    const ms = performance.now() - t0;
    const dots = v.rows.reduce((a, r) => a + r.cells.reduce((b, c) => b + c.length, 0), 0);
    if (v.rows.length !== ITEMS || v.columns.length !== PROFILES || dots !== ITEMS * PROFILES * REPEATS) {
      throw new Error(
        `matrix ${v.rows.length} × ${v.columns.length} with ${dots} dots, expected ${ITEMS} × ${PROFILES} with ${ITEMS * PROFILES * REPEATS}`,
      );
    }
    if (!v.counts['tool-errors'] || v.rows.some((r) => r.cells.some((c) => c.some((d) => d.stepIndex === null)))) {
      throw new Error('tool errors or answer steps missing from the matrix');
    }
    shown = { rows: v.rows.length, columns: v.columns.length, dots, counts: v.counts };
    return ms;
  }
  function baseline(): { ms: number; items: number } {
    const t0 = performance.now();
    const db = new Database(storeFile, { readonly: true });
    let items = 0;
    for (const row of db.prepare('SELECT run_id, detail FROM scores').all() as Array<{
      run_id: string;
      detail: string;
    }>) {
      items += (JSON.parse(row.detail) as { detail: { score: { rows: unknown[] } } }).detail.score.rows.length;
    }
    db.close();
    return { ms: performance.now() - t0, items };
  }

  const base: number[] = [];
  const subj: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const b = baseline();
    if (b.items !== ITEMS * PROFILES * REPEATS) throw new Error(`baseline read ${b.items} item scores`);
    base.push(b.ms);
    subj.push(await subject());
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const b = median(base);
  const s = median(subj);
  verdict(
    `model × question matrix opened from the store (host time): ${ITEMS} LongDA queries in ${BLOCKS} publications × ${PROFILES} profiles × ${REPEATS} repeats`,
    `≤ ${GOAL_MS} ms (absolute)`,
    `${s.toFixed(1)} ms median`,
    `the same scores read straight from SQLite (better-sqlite3, JSON.parse) ${b.toFixed(1)} ms median; ratio to goal`,
    s / GOAL_MS,
    s <= GOAL_MS,
  );
  console.log(
    JSON.stringify({
      samples: { subjectMs: subj.map((x) => +x.toFixed(1)), baselineMs: base.map((x) => +x.toFixed(1)) },
      shown,
    }),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
