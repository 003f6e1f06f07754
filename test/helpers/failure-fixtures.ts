/**
 * A store of DDR-style runs for failure analysis (issue 19): two models × two scenarios × three entities, each run
 * with six steps, a saved score whose checklist has items judged incorrect, and recorded insights and a final
 * report. Used by the unit tests and the integration test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { annotationStoreOf, type AnnotationStore } from '../../src/core/annotations/index.ts';
import type { StepRecord } from '../../src/core/store/records.ts';
import { openStore } from '../../src/core/store/run-store.ts';
import type { RunStore } from '../../src/core/store/types.ts';

export const FIXTURE_MODELS = ['model-a', 'model-b'] as const;
export const FIXTURE_SCENARIOS = ['mimic', '10k'] as const;
export const FIXTURE_REPORT =
  'FINISH: Revenue grew 12% in 2021. Margins fell because of higher costs. The company will double sales next year. No debt was reported.';

function step(runId: string, index: number): StepRecord {
  const now = new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString();
  const last = index === 5;
  return {
    runId,
    index,
    startedAt: now,
    endedAt: now,
    latencyMs: 100 + index,
    toolMs: 10,
    assistant: {
      role: 'assistant',
      content: last ? FIXTURE_REPORT : `Step ${index + 1}: I query the table for entity facts.`,
    },
    toolCalls: last
      ? []
      : [
          {
            id: `c${index}`,
            name: 'execute_sql',
            argumentsText: JSON.stringify({ query: `SELECT * FROM t${index} LIMIT 5` }),
            observation: `row ${index}: value ${index * 7}`,
            isError: index === 2,
            truncated: false,
            durationMs: 10,
          },
        ],
    extraMessages: [],
    usage: { input: 500, output: 50, cached: 0 },
    costUsd: null,
    finishReason: last ? 'stop' : 'tool_calls',
  };
}

/** Checklist labels of a run: entity e<k> fails items by a fixed pattern so every stratum has failed items. */
function labels(k: number): Array<'CORRECT_INFO' | 'INCORRECT_INFO' | 'INSUFFICIENT_INFO'> {
  return [0, 1, 2, 3].map((i) =>
    (i + k) % 3 === 0 ? 'CORRECT_INFO' : (i + k) % 3 === 1 ? 'INCORRECT_INFO' : 'INSUFFICIENT_INFO',
  );
}

/**
 * Seeds the runs. @returns their ids, `ddr-<model>-<scenario>-e<k>` (k = 1..3).
 */
export async function seedFailureFixture(st: RunStore, workspace: string): Promise<string[]> {
  const ids: string[] = [];
  for (const model of FIXTURE_MODELS) {
    for (const scenario of FIXTURE_SCENARIOS) {
      for (let k = 1; k <= 3; k++) {
        const id = `ddr-${model}-${scenario}-e${k}`;
        if (await st.getRun(id)) {
          ids.push(id);
          continue;
        }
        await st.createRun({
          id,
          suite: 'ddr',
          blockId: `e${k}`,
          agent: 'llm',
          model,
          params: { model },
          promptHash: 'h',
          toolSet: 'ddr',
          dataChecksums: { 'db.sqlite': scenario },
          loupeVersion: 't',
          sandbox: 'off',
          workspace,
        });
        for (let i = 0; i < 6; i++) await st.commitStep(step(id, i));
        await st.updateRun(id, { status: 'finished' });
        const ls = labels(k);
        const items = ls.map((label, index) => ({
          index,
          question: `Fact ${index + 1} of entity e${k}?`,
          label,
          supporting: [],
          contradicting: [],
          judgeId: 'llm:judge',
          judgementKey: null,
          status: 'done',
        }));
        const ctx = (xs: typeof items) => ({
          entityId: `e${k}`,
          included: true,
          items: xs,
          correct: xs.filter((x) => x.label === 'CORRECT_INFO').length,
          judged: xs.length,
          accuracy: 0,
        });
        const detail = {
          checklist: {
            perEntity: [
              {
                entityId: `e${k}`,
                messageWise: ctx(items),
                trajectoryWise: ctx(
                  items.map((x) => ({ ...x, label: x.index === 0 ? ('CORRECT_INFO' as const) : x.label })),
                ),
                validInsights: 3,
                totalInsights: 4,
              },
            ],
          },
        };
        const score = {
          runId: id,
          suite: 'ddr',
          blockId: `e${k}`,
          model,
          agent: 'llm',
          status: 'finished',
          benchmark: 'ddr',
          judgeId: 'llm:judge',
          options: { scenario },
          summary: {},
          pending: 0,
          unjudged: 0,
          detail,
        };
        await st.scores.save({
          runId: id,
          benchmark: 'ddr',
          judgeId: 'llm:judge',
          options: { scenario },
          summary: {},
          detail: score,
          pending: 0,
          scoredAt: new Date(Date.UTC(2026, 0, 2)).toISOString(),
        });
        const insights = [0, 1, 3].map((s) => ({
          stepIndex: s,
          tool: 'execute_sql',
          insight: `Insight from step ${s + 1}: value ${s * 7} in table t${s}.`,
        }));
        await st.addEvent(
          id,
          'ddr-result',
          JSON.stringify({
            options: { finishRule: 'paper', emptyInsights: 'keep', insights: 'reasoning' },
            finalReport: FIXTURE_REPORT,
            finalReportSource: 'finish',
            insights,
            touched: { tables: [], columns: [], queries: 5 },
          }),
        );
        ids.push(id);
      }
    }
  }
  return ids;
}

/** A seeded failure-analysis store in a temp folder, for unit tests: its folder, run store, annotation store, run ids. */
export interface FailureFixture {
  dir: string;
  rs: RunStore;
  ann: AnnotationStore;
  ids: string[];
}

/** Creates a temp folder with a SQLite run store seeded by {@link seedFailureFixture}. */
export async function openFailureFixture(prefix: string): Promise<FailureFixture> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const rs = openStore(join(dir, 'runs.sqlite'));
  return { dir, rs, ann: annotationStoreOf(rs), ids: await seedFailureFixture(rs, dir) };
}

/** Closes the store of {@link openFailureFixture} and removes its folder (safe on a fixture that failed to open). */
export async function closeFailureFixture(fx: FailureFixture | undefined): Promise<void> {
  await fx?.rs.close();
  if (fx?.dir) rmSync(fx.dir, { recursive: true, force: true });
}
