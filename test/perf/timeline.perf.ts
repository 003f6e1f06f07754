/// <reference lib="dom" />
/**
 * Timeline perf (issue 7, gates per issue 23): a synthetic 10,000-step trajectory opened in the Trajectory Timeline
 * webview in headless chromium (same CSP as VS Code, host in Node), against a 10-step trajectory as the baseline.
 * Baseline and subject alternate, ROUNDS rounds (each: 10 steps, then 10,000 steps, then the store's change
 * detection); every gate is the median over rounds. Gates (verdict lines; a FAIL exits 1; absolute goals, the ratio
 * printed is to the goal, the 10-step baseline beside it):
 *  - 10,000 rows posted to an open panel (postMessage with structured clone, as VS Code delivers) → painted ≤ 1000 ms
 *  - JS heap after load ≤ 150 MB
 *  - long tasks (> 50 ms) while scrolling the whole list top to bottom: none (median count over rounds)
 *  - live update, store commit → row visible, p95 over 20 steps ≤ 200 ms, for a run another process writes (polled):
 *    the store part through the panel's own follow (followTimeline: 100 ms polling, batching window) plus the webview's
 *    notification → render time, each measured, summed sample by sample.
 *  - the same for a run in this window (pushed: after its step-end the panel reads at once, the poll's own read):
 *    p95 ≤ 200 ms and below the polled p95 of the same run (baseline and subject alternate within each round); its
 *    host part (commit → rows handed to the webview) p95 ≤ one polling interval.
 * Printed as information, not gated: time to "ready" through this harness's own transport (see the comment there),
 * state arrived → rows rendered, first contentful paint, and the parts of the live update.
 * Usage: node esbuild.js && node test/perf/timeline.perf.ts   (exit 1 on a FAIL)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  followTimeline,
  openTimeline,
  TIMELINE_BATCH_MS,
  TIMELINE_POLL_MS,
  timelineHeatmap,
  toTimelineRun,
  toTimelineStep,
} from '../../src/app/timeline/timeline.ts';
import type { RunRecord, StepRecord } from '../../src/core/agent/types.ts';
import { openStore } from '../../src/core/store/run-store.ts';
import type { TimelineState } from '../../src/protocol/timeline.ts';
import { preview } from '../helpers/webview-preview.ts';
import { verdict } from './verdict.ts';

const ROUNDS = 3;
const BIG = 10_000;
const SMALL = 10;
const LIVE_SAMPLES = 20;
const DELIVER_GOAL_MS = 1000;
const HEAP_GOAL_MB = 150;
const LIVE_GOAL_MS = 200;

const TOOLS = ['read_doc', 'search_doc', 'retriever', 'python', 'answer', 'notes', 'save_code'];

function syntheticStep(i: number, t0: number): StepRecord {
  const tool = TOOLS[(i * 7 + (i >> 3)) % TOOLS.length] as string;
  const args =
    tool === 'python'
      ? { code: `df_${i} = pd.read_sas('data/DEMO_L.xpt')\nprint(df_${i}.shape)` }
      : { keyword: `VAR${i % 97}`, max_matches: 5 };
  return {
    runId: 'perf',
    index: i,
    startedAt: new Date(t0 + i * 1500).toISOString(),
    endedAt: new Date(t0 + i * 1500 + 900).toISOString(),
    latencyMs: 400 + (i % 13) * 37,
    toolMs: 100 + (i % 7) * 91,
    assistant: { role: 'assistant', content: `Step ${i}: looking at ${tool}.`, tool_calls: [] },
    toolCalls: [
      {
        id: `c${i}`,
        name: tool,
        argumentsText: JSON.stringify(args),
        observation: `observation ${i} `.repeat(20),
        isError: i % 50 === 0,
        truncated: false,
        durationMs: 100,
      },
    ],
    extraMessages: [],
    usage: { input: 2000 + i, output: 80, cached: 0 },
    costUsd: null,
    finishReason: 'tool_calls',
  };
}

function run(n: number): RunRecord {
  return {
    id: 'perf',
    suite: 'longda',
    blockId: 'NHANES_perf',
    agent: 'llm',
    model: 'synthetic',
    params: {},
    promptHash: '',
    toolSet: 'longda',
    dataChecksums: {},
    loupeVersion: '0',
    sandbox: 'off',
    storedWorkspace: '/tmp',
    status: 'running',
    statusReason: null,
    createdAt: new Date(0).toISOString(),
    startedAt: new Date(0).toISOString(),
    endedAt: null,
    durationMs: n * 1500,
    steps: n,
    tokens: { input: n * 2000, output: n * 80, cached: 0 },
    costUsd: null,
  };
}

function state(n: number): TimelineState {
  const steps = Array.from({ length: n }, (_, i) => toTimelineStep(syntheticStep(i, 0), 0));
  return { run: toTimelineRun(run(n)), steps, heatmap: timelineHeatmap(steps) };
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;

interface Measured {
  deliverMs: number;
  renderMs: number;
  readyMs: number;
  fcpMs: number;
  heapMb: number;
  longTasks: number[];
  liveMs: number[];
}

async function measure(n: number, withScroll: boolean): Promise<Measured> {
  const st = state(n);
  const out: Measured = {
    deliverMs: NaN,
    renderMs: NaN,
    readyMs: NaN,
    fcpMs: NaN,
    heapMb: NaN,
    longTasks: [],
    liveMs: [],
  };
  await preview({
    panel: 'timeline',
    png: join(tmpdir(), `loupe-timeline-perf-${n}.png`),
    handle: (method) => {
      if (method === 'webview/ready') return { state: st };
      if (method === 'timeline/search') return { indices: [] };
      throw new Error(`unexpected ${method}`);
    },
    act: async (page, _frame, notify) => {
      const f = page.frames().find((x) => x !== page.mainFrame() && x.url().endsWith('/panel'));
      if (!f) throw new Error('panel frame not found');
      const marks = await f.evaluate(() => ({
        ready: performance.getEntriesByName('loupe:timeline-ready')[0]?.startTime ?? NaN,
        state: performance.getEntriesByName('loupe:timeline-state')[0]?.startTime ?? NaN,
        fcp: performance.getEntriesByType('paint').find((e) => e.name === 'first-contentful-paint')?.startTime ?? NaN,
      }));
      out.readyMs = marks.ready;
      out.renderMs = marks.ready - marks.state;
      out.fcpMs = marks.fcp;
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('HeapProfiler.collectGarbage');
      await cdp.send('Performance.enable');
      const metrics = (await cdp.send('Performance.getMetrics')).metrics as { name: string; value: number }[];
      out.heapMb = (metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? NaN) / 1e6;
      if (withScroll) {
        // The transport as VS Code has it: postMessage (structured clone) into the panel frame, then render.
        // Stage the rows in the outer page first (untimed), then time post → all rows counted and painted.
        const more = Array.from({ length: n }, (_, i) => toTimelineStep(syntheticStep(n + 20 + i, 0), 0));
        await page.evaluate(
          (m) => {
            (globalThis as unknown as { __staged: unknown }).__staged = m;
          },
          {
            kind: 'notification',
            method: 'timeline/didAppendSteps',
            params: { runId: 'perf', steps: more, heatmap: st.heatmap, run: toTimelineRun(run(2 * n)) },
          },
        );
        const t0 = await page.evaluate(() => {
          const g = globalThis as unknown as { __staged: unknown; loupeNotify(x: unknown): void };
          const t = Date.now();
          g.loupeNotify(g.__staged);
          return t;
        });
        const t1 = await f.evaluate(
          async (want) => {
            while (document.getElementById('count')?.textContent !== want) {
              await new Promise((r) => requestAnimationFrame(r));
            }
            await new Promise((r) => requestAnimationFrame(r));
            return Date.now();
          },
          `${2 * n} steps`,
        );
        out.deliverMs = t1 - t0;
        out.longTasks = await f.evaluate(async () => {
          const tasks: number[] = [];
          const obs = new PerformanceObserver((l) => l.getEntries().forEach((e) => tasks.push(e.duration)));
          obs.observe({ type: 'longtask', buffered: false });
          const el = document.querySelector('.tl-list') as HTMLElement;
          if (!el) throw new Error('no list: ' + document.body.innerHTML.slice(0, 300));
          const end = el.scrollHeight;
          for (let y = 0; y <= end; y += 1800) {
            el.scrollTop = y;
            await new Promise((r) => requestAnimationFrame(() => r(null)));
          }
          await new Promise((r) => setTimeout(r, 200));
          obs.disconnect();
          return tasks;
        });
        // Live updates: notification → row rendered (the webview part of "commit → visible").
        for (let k = 0; k < LIVE_SAMPLES; k++) {
          const i = 2 * n + 20 + k;
          const step = toTimelineStep(syntheticStep(i, 0), 0);
          const t0 = Date.now();
          await notify('timeline/didAppendSteps', {
            runId: 'perf',
            steps: [step],
            heatmap: st.heatmap,
            run: toTimelineRun(run(i + 1)),
          });
          await f.waitForFunction(
            (c) => document.getElementById('count')?.textContent === `${c} steps`,
            2 * n + k + 1,
            { polling: 'raf' },
          );
          out.liveMs.push(Date.now() - t0);
        }
      }
    },
  });
  return out;
}

/**
 * Store side of "commit → visible", through the panel's own follow (`followTimeline`: subscription, poll, batching
 * window), from the start of `commitStep` to the rows handed to the panel, in ms, one per sample:
 *  - `polled`: the run is written by another process (another connection to the file); the timeline finds the step at
 *    its next poll ({@link TIMELINE_POLL_MS}).
 *  - `pushed`: the run is in this VS Code window (one store, as the extension host shares it); after the commit the run
 *    session's step-end tells the panel (`ctx.onDidCommitSteps`), which reads at once (`poll()`), the poll's own read.
 */
async function storeDetection(samples: number, mode: 'polled' | 'pushed'): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), 'loupe-tl-perf-'));
  const file = join(dir, 'runs.sqlite');
  const reader = openStore(file);
  const writer = mode === 'polled' ? openStore(file) : reader;
  try {
    const r = run(0);
    await writer.createRun({
      id: r.id,
      suite: r.suite,
      blockId: r.blockId,
      agent: r.agent,
      model: r.model,
      params: {},
      promptHash: '',
      toolSet: 'longda',
      dataChecksums: {},
      loupeVersion: '0',
      sandbox: 'off',
      workspace: dir,
    });
    const opened = await openTimeline(reader, r.id);
    const lat: number[] = [];
    let pending: { i: number; t0: number; done: () => void } | undefined;
    const follow = followTimeline(reader, opened, new Set(), (rows) => {
      if (pending && rows.some((x) => x.index === pending!.i)) {
        lat.push(performance.now() - pending.t0);
        pending.done();
      }
    });
    for (let i = 0; i < samples; i++) {
      await new Promise((r2) => setTimeout(r2, 37 * (i % 5)));
      await new Promise<void>((done) => {
        // the poll timer is unref'd; keep the process alive while we wait for it
        const keepAlive = setTimeout(() => done(), 5000);
        pending = {
          i,
          t0: performance.now(),
          done: () => {
            clearTimeout(keepAlive);
            done();
          },
        };
        void writer.commitStep(syntheticStep(i, Date.now())).then(() => {
          if (mode === 'pushed') follow.poll();
        });
      });
    }
    follow();
    if (lat.length < samples) {
      throw new Error(`${mode}: ${samples - lat.length} of ${samples} steps never reached the timeline`);
    }
    return lat;
  } finally {
    if (writer !== reader) writer.close();
    reader.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const smalls: Measured[] = [];
const bigs: Measured[] = [];
const polled: number[][] = [];
const pushed: number[][] = [];
for (let r = 0; r < ROUNDS; r++) {
  smalls.push(await measure(SMALL, true));
  bigs.push(await measure(BIG, true));
  // baseline (polled) and subject (pushed) alternate, the first of each round taking turns
  if (r % 2 === 0) {
    polled.push(await storeDetection(LIVE_SAMPLES, 'polled'));
    pushed.push(await storeDetection(LIVE_SAMPLES, 'pushed'));
  } else {
    pushed.push(await storeDetection(LIVE_SAMPLES, 'pushed'));
    polled.push(await storeDetection(LIVE_SAMPLES, 'polled'));
  }
}
/** Per round: commit → visible = store part (measured through the panel's follow, batching included) + webview notification → row, sample by sample. */
const e2e = (ms: Measured[], store: number[][]) => ms.map((m, r) => store[r]!.map((s, i) => s + (m.liveMs[i] ?? NaN)));
const med = (xs: number[]) => pct(xs, 50);
const over = (ms: Measured[], k: Exclude<keyof Measured, 'longTasks' | 'liveMs'>) => med(ms.map((m) => m[k]));
const f = (x: number) => x.toFixed(1);
const rounds = `median of ${ROUNDS} alternating rounds`;

console.log('timeline perf (headless chromium, same CSP as VS Code)');
const deliver = over(bigs, 'deliverMs');
verdict(
  `10,000 rows posted to an open panel (postMessage, as VS Code delivers) → painted (${rounds})`,
  `≤ ${DELIVER_GOAL_MS} ms`,
  `${f(deliver)} ms`,
  `${SMALL} rows posted ${f(over(smalls, 'deliverMs'))} ms; ratio to the goal`,
  deliver / DELIVER_GOAL_MS,
  deliver <= DELIVER_GOAL_MS,
);
const heap = over(bigs, 'heapMb');
verdict(
  `JS heap after load, 10,000 steps (${rounds})`,
  `≤ ${HEAP_GOAL_MB} MB`,
  `${f(heap)} MB`,
  `${SMALL} steps ${f(over(smalls, 'heapMb'))} MB; ratio to the goal`,
  heap / HEAP_GOAL_MB,
  heap <= HEAP_GOAL_MB,
);
const longTasks = med(bigs.map((m) => m.longTasks.length));
const longest = Math.max(0, ...bigs.flatMap((m) => m.longTasks));
verdict(
  `long tasks > 50 ms while scrolling 20,000 rows (${rounds}; per round ${bigs.map((m) => m.longTasks.length).join(', ')}${longest ? `, longest ${f(longest)} ms` : ''})`,
  '0',
  `${longTasks}`,
  `scrolling ${2 * SMALL} rows: ${med(smalls.map((m) => m.longTasks.length))}; ratio is the count`,
  longTasks,
  longTasks === 0,
);
const p95 = (ms: Measured[], store: number[][]) => med(e2e(ms, store).map((xs) => pct(xs, 95)));
const liveBig = p95(bigs, polled);
verdict(
  `live update, a step another process committed → row visible in a 10,000-step timeline (polled every ${TIMELINE_POLL_MS} ms), p95 of ${LIVE_SAMPLES} (store poll + batching + render; ${rounds})`,
  `≤ ${LIVE_GOAL_MS} ms`,
  `${f(liveBig)} ms`,
  `${SMALL}-step timeline ${f(p95(smalls, polled))} ms; ratio to the goal`,
  liveBig / LIVE_GOAL_MS,
  liveBig <= LIVE_GOAL_MS,
);
// The subject of the push: a run in this window never waits for a poll. End to end (what the user sees) it has the same
// goal and must beat the polled path of the same run; the host's part alone (commit → rows handed to the webview) must
// stay within one polling interval, which no polled read can (the render part is the browser's, the same for both).
const pushedBig = p95(bigs, pushed);
verdict(
  `live update, a step a run in this window committed → row visible in a 10,000-step timeline (pushed: read at once), p95 of ${LIVE_SAMPLES} (read + batching + render; ${rounds})`,
  `≤ ${LIVE_GOAL_MS} ms and below the polled path`,
  `${f(pushedBig)} ms`,
  `polled ${f(liveBig)} ms (${SMALL}-step timeline pushed ${f(p95(smalls, pushed))} ms); ratio pushed / polled`,
  pushedBig / liveBig,
  pushedBig <= LIVE_GOAL_MS && pushedBig < liveBig,
);
const hostPushed = med(pushed.map((xs) => pct(xs, 95)));
const hostPolled = med(polled.map((xs) => pct(xs, 95)));
verdict(
  `live update, host part: store commit → rows handed to the webview, p95 of ${LIVE_SAMPLES}, pushed (${rounds}; batching included)`,
  `≤ ${TIMELINE_POLL_MS} ms (one polling interval)`,
  `${f(hostPushed)} ms`,
  `polled ${f(hostPolled)} ms; ratio pushed / polled`,
  hostPushed / hostPolled,
  hostPushed <= TIMELINE_POLL_MS,
);

// Information only. "Ready" here is the page load plus the initial state delivered through this harness's transport:
// playwright's exposeFunction, which JSON-serialises the whole state through the DevTools protocol (slow for MBs).
// VS Code does not use that path — it posts the state into the webview with postMessage (structured clone), which the
// first gate above measures — so this number describes the test harness, not what a user waits for, and is no gate.
console.log(
  `  (information) ready through this harness's transport (playwright exposeFunction, JSON; not VS Code's path): ${SMALL} steps ${f(over(smalls, 'readyMs'))} ms · 10,000 steps ${f(over(bigs, 'readyMs'))} ms`,
);
console.log(
  `  (information) state arrived → rows rendered: ${SMALL} steps ${f(over(smalls, 'renderMs'))} ms · 10,000 steps ${f(over(bigs, 'renderMs'))} ms`,
);
console.log(
  `  (information) first contentful paint: ${SMALL} steps ${f(over(smalls, 'fcpMs'))} ms · 10,000 steps ${f(over(bigs, 'fcpMs'))} ms`,
);
const part = (xs: number[][], q: number) => f(med(xs.map((x) => pct(x, q))));
console.log(
  `  (information) live update parts, 10,000 steps: webview notification → row p50 ${f(med(bigs.map((m) => pct(m.liveMs, 50))))} ms, p95 ${f(med(bigs.map((m) => pct(m.liveMs, 95))))} ms; store commit → rows to the panel, polled (${TIMELINE_POLL_MS} ms) p50 ${part(polled, 50)} ms, p95 ${part(polled, 95)} ms; pushed p50 ${part(pushed, 50)} ms, p95 ${part(pushed, 95)} ms (both through the panel's batching: ≥ ${TIMELINE_BATCH_MS} ms between messages)`,
);
console.log(
  JSON.stringify({
    rounds: ROUNDS,
    big: bigs.map((m) => ({
      deliverMs: m.deliverMs,
      heapMb: +m.heapMb.toFixed(2),
      longTasks: m.longTasks.length,
      liveP95Ms: pct(m.liveMs, 95),
      readyMs: +m.readyMs.toFixed(1),
    })),
    small: smalls.map((m) => ({
      deliverMs: m.deliverMs,
      heapMb: +m.heapMb.toFixed(2),
      longTasks: m.longTasks.length,
      liveP95Ms: pct(m.liveMs, 95),
      readyMs: +m.readyMs.toFixed(1),
    })),
    polledP95Ms: polled.map((xs) => +pct(xs, 95).toFixed(1)),
    pushedP95Ms: pushed.map((xs) => +pct(xs, 95).toFixed(1)),
  }),
);
