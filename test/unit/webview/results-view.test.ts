import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ToolHeatmapView } from '../../../src/protocol/results.ts';
import {
  bladeSpec,
  cellTooltip,
  formatCell,
  formatSpread,
  formatTokens,
  formatValue,
  heatmapSpec,
  heatmapValues,
  logFit,
  scatterSpec,
} from '../../../webview/shared/results-view.ts';

describe('webview results helpers', () => {
  it('formats values per column unit', () => {
    assert.equal(formatValue(0.6891, 'percent'), '68.9%');
    assert.equal(formatValue(8_250_000, 'tokens'), '8.25M');
    assert.equal(formatValue(1234, 'tokens'), '1.2k');
    assert.equal(formatValue(5400, 'seconds'), '1.50 h');
    assert.equal(formatValue(90, 'seconds'), '1.5 min');
    assert.equal(formatValue(6.2, 'number'), '6.20');
    assert.equal(formatValue(3, 'number'), '3');
    assert.equal(formatValue(1, 'fraction'), '1.00');
    assert.equal(formatValue(null, 'percent'), '—');
    assert.equal(formatTokens(999), '999');
  });

  it('formats a cell with its CI in the column unit', () => {
    assert.deepEqual(formatCell({ value: 0.5, ci: [0.41, 0.57], runIds: ['a'] }, 'percent'), {
      text: '50.0%',
      ci: '[41.0, 57.0]',
    });
    assert.deepEqual(formatCell({ value: 0.5, ci: [0.41, 0.57], runIds: ['a'] }, 'number'), {
      text: '0.50',
      ci: '[0.41, 0.57]',
    });
    assert.deepEqual(formatCell(undefined, 'number'), { text: '—' });
    const tip = cellTooltip('F1', { value: 0.5, ci: [0.4, 0.6], n: 12, pending: 2, runIds: ['a', 'b'] }, 'number');
    assert.match(tip, /n = 12/);
    assert.match(tip, /2 pending judgements/);
    assert.match(tip, /choose among 2 runs/);
  });

  it('fits y = a ln x + b exactly on points that lie on such a curve', () => {
    const xs = [1e5, 1e6, 1e7, 3e7];
    const ys = xs.map((x) => 3 * Math.log(x) - 10);
    const fit = logFit(xs, ys);
    assert.ok(fit);
    assert.ok(Math.abs(fit.a - 3) < 1e-9 && Math.abs(fit.b + 10) < 1e-9);
    assert.equal(logFit([1, 1, 2], [1, 2, 3]), undefined);
  });

  it('builds the match-vs-tokens spec with a log x scale, match in percent and the fit layer only with 3+ points', () => {
    const pts = [
      { model: 'a', totalTokens: 1e6, match: 0.7, blocks: 2, runIds: ['r1'] },
      { model: 'b', totalTokens: 5e6, match: 0.5, blocks: 2, runIds: ['r2'] },
    ];
    const two = scatterSpec(pts) as { layer: { mark: { type: string } }[]; data: { values: { matchPct: number }[] } };
    assert.deepEqual(
      two.layer.map((l) => l.mark.type),
      ['point', 'text'],
    );
    assert.equal(two.data.values[0]?.matchPct, 70);
    const three = scatterSpec([...pts, { model: 'c', totalTokens: 2e7, match: 0.2, blocks: 1, runIds: ['r3'] }]) as {
      layer: { mark: { type: string } }[];
    };
    assert.deepEqual(
      three.layer.map((l) => l.mark.type),
      ['line', 'point', 'text'],
    );
    const x = (two.layer[0] as unknown as { encoding: { x: { scale: { type: string } } } }).encoding.x.scale.type;
    assert.equal(x, 'log');
  });

  it('flattens a heatmap tool × bin, keeping shares and counts', () => {
    const hm: ToolHeatmapView = {
      model: 'm',
      tools: ['search_doc', 'answer'],
      bins: 2,
      matrix: [
        [1, 0.25],
        [0, 0.75],
      ],
      counts: [
        [4, 1],
        [0, 3],
      ],
      nTrajectories: 1,
      runIds: ['r'],
    };
    const v = heatmapValues(hm);
    assert.equal(v.length, 4);
    assert.deepEqual(
      v.find((r) => r.tool === 'answer' && r.bin === 1),
      { tool: 'answer', bin: 1, binLabel: '50–100%', share: 0.75, count: 3 },
    );
    const spec = heatmapSpec(hm) as { encoding: { y: { sort: string[] } } };
    assert.deepEqual(spec.encoding.y.sort, ['search_doc', 'answer']);
  });

  it('puts BLADE F1 CIs on the x axis and drops rows without an F1', () => {
    const cell = (value: number | null, ci?: [number, number]) => ({ value, ci, runIds: ['r'] });
    const spec = bladeSpec([
      { model: 'm', decisionType: 'transform', precision: cell(0.6), coverage: cell(0.4), f1: cell(0.48, [0.4, 0.55]) },
      { model: 'm', decisionType: 'model', precision: cell(null), coverage: cell(null), f1: cell(null) },
    ]) as { data: { values: { lo: number; hi: number }[] } };
    assert.equal(spec.data.values.length, 1);
    assert.deepEqual([spec.data.values[0]?.lo, spec.data.values[0]?.hi], [0.4, 0.55]);
  });
});

describe('spread across repeats (issue 22)', () => {
  it('below 5 repeats: the range and every point; from 5 on: the bootstrap CI of the mean; n always shown', () => {
    const few = formatSpread(
      { kind: 'points', n: 3, mean: 0.5, min: 0.25, max: 0.75, points: [0.25, 0.5, 0.75] },
      'percent',
    )!;
    assert.equal(few.text, 'range 25.0–75.0% · n=3');
    assert.equal(few.points, '25.0%, 50.0%, 75.0%');
    const many = formatSpread(
      { kind: 'ci', n: 6, mean: 0.5, min: 0.1, max: 0.9, lo: 0.3, hi: 0.7, points: [0.1, 0.3, 0.5, 0.5, 0.7, 0.9] },
      'fraction',
    )!;
    assert.equal(many.text, '95% CI [0.30, 0.70] · n=6');
    assert.equal(formatSpread(undefined, 'percent'), undefined);
  });
});
