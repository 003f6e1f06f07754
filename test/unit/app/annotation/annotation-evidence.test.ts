import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { itemFields, judgedText, runEvidence } from '../../../../src/app/annotation/annotation.ts';
import { openStore } from '../../../../src/core/store/run-store.ts';
import type { StepRecord } from '../../../../src/core/store/records.ts';

describe('annotation panel: what the expert judges and its evidence (issue 42 defect 4)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'loupe-ann-ev-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('labels the sides of a BLADE semantic match: A is the ground truth, B the agent', () => {
    const f = itemFields('semantic-match', {
      kind: 'conceptual-variable',
      a: 'wind speed',
      b: 'max sustained wind',
      context: 'hurricane deaths',
    });
    assert.deepEqual(
      f.map((x) => x.label),
      ['Kind', 'A — ground truth', 'B — agent', 'Context'],
    );
  });

  it('matches evidence against what is judged, not the material shown with it', () => {
    assert.equal(judgedText('hallucination', { insight: 'aged 61', evidence: 'step 1 → 99 rows' }), 'aged 61');
    assert.equal(
      judgedText('semantic-match', {
        kind: 'model',
        a: 'OLS',
        b: 'logistic regression',
        context: 'Is femininity 2014 damage?',
      }),
      'OLS\nlogistic regression',
    );
  });

  it('lists only the cells that mention the item, and counts the others', async () => {
    const st = await openStore(join(dir, 'runs.sqlite'));
    await st.createRun({
      id: 'b1',
      suite: 'blade',
      blockId: 'hurricane',
      agent: 'llm',
      model: 'm',
      params: {},
      promptHash: 'h',
      toolSet: 't',
      dataChecksums: {},
      loupeVersion: 't',
      sandbox: 'off',
      workspace: dir,
    });
    const t = new Date(Date.UTC(2026, 0, 1)).toISOString();
    const step: StepRecord = {
      runId: 'b1',
      index: 0,
      startedAt: t,
      endedAt: t,
      latencyMs: 1,
      toolMs: 1,
      assistant: { role: 'assistant', content: 'look' },
      toolCalls: [],
      extraMessages: [],
      usage: { input: 1, output: 1, cached: 0 },
      costUsd: null,
      finishReason: 'stop',
    };
    await st.commitStep(step);
    const cell = (seq: number, code: string, stdout: string) =>
      st.insertCell({
        runId: 'b1',
        stepIndex: 0,
        seq,
        code,
        status: 'ok',
        stdout,
        stderr: '',
        result: null,
        error: null,
        tables: [],
        figures: [],
        durationMs: 1,
        replay: false,
      } as never);
    await cell(0, 'import warnings\nwarnings.filterwarnings("ignore")', '');
    await cell(1, 'print(df["wind_speed"].describe())', 'count 94\nmean 41.2');
    await cell(2, 'validate(submission)', '{"ok": true, "errors": [], "schema": "v2"}');
    await cell(3, 'smf.ols("alldeaths ~ masfem", df).fit()', 'masfem 0.02');
    const ev = await runEvidence(
      st,
      'b1',
      judgedText('semantic-match', {
        kind: 'conceptual-variable',
        a: 'wind speed',
        b: 'maximum wind',
        context: 'validation',
      }),
    );
    assert.deepEqual(
      ev.cells.map((c) => c.seq),
      [1],
    );
    assert.deepEqual(ev.cells[0]!.matches.sort(), ['speed', 'wind']);
    assert.equal(ev.hiddenCells, 3);
    await st.close();
  });
});
