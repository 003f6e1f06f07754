/**
 * Issue 47 (LongDA items 1–7): Loupe under `--preset official` equals LongDA's own `evaluate_results.py` path
 * (`pd.read_csv` → `metric.evaluate_answers` → `generate_evaluation_summary`, pandas 1.5.3, numpy 1.24.2) bit for bit
 * (`===` on doubles) on adversarial results files: set / complex / huge-integer literals, pandas NA tokens, numeric
 * columns read by pandas' float parser, inf words, long lists (numpy pairwise means), duplicate q_ids and grouping by
 * source. Expected figures: test/fixtures/official-parity/longda-edges/expected.json (see its README).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  longdaOptions,
  parseLongtaAnswers,
  scoreLongda,
  type LongdaScore,
} from '../../../../src/core/benchmarks/longda/eval.ts';
import { getBenchmark } from '../../../../src/core/benchmarks/registry.ts';
import { parseOptionsWithPreset } from '../../../../src/core/benchmarks/options.ts';

const DIR = join(import.meta.dirname, '../../../fixtures/official-parity/longda-edges');
type Num = number | string | null;
interface Rates {
  n?: number;
  total_questions?: number;
  covered?: number;
  coverage?: Num;
  coverage_rate?: Num;
  match_rate: Num;
  mean_absolute_error: Num;
  mean_percentage_error: Num;
}
interface FileExp {
  full_file_error: string | null;
  aborted_rows: Array<{ row: number; q_id: string; error: string }>;
  rows: Array<{ row: number; q_id: string; coverage: number; match: Num; abs_error: Num; pct_error: Num }>;
  overall: Rates;
  by_source: Array<[string, Rates]>;
}
const EXP = JSON.parse(readFileSync(join(DIR, 'expected.json'), 'utf8')) as { files: Record<string, FileExp> };
const num = (x: Num): number | null => (x === null ? null : typeof x === 'string' ? Number(x) : x);
const official = () =>
  longdaOptions(
    parseOptionsWithPreset(getBenchmark('longda').scoreOptions, 'official', {}) as Record<string, string | number>,
  );

/** Every figure of the official output next to Loupe's; returns [what, official, loupe] triples. */
function pairs(name: string, s: LongdaScore, e: FileExp): Array<[string, number | null, number | null]> {
  const out: Array<[string, number | null, number | null]> = [];
  assert.equal(s.rows.length, e.rows.length, `${name}: rows scored`);
  s.rows.forEach((r, i) => {
    const x = e.rows[i]!;
    assert.equal(r.qId, x.q_id, `${name} row ${x.row}`);
    out.push([`${name}:${x.row} coverage`, x.coverage, r.coverageComparable]);
    out.push([`${name}:${x.row} match`, num(x.match), r.matchPartial]);
    out.push([`${name}:${x.row} abs_error`, num(x.abs_error), r.coverageComparable ? (r.absErr ?? null) : null]);
    out.push([`${name}:${x.row} pct_error`, num(x.pct_error), r.coverageComparable ? (r.pctErr ?? null) : null]);
  });
  const rates = (
    what: string,
    o: Rates,
    l: { n: number; coverageComparable: number; matchPartial: number; mae: number | null; mpe: number | null },
  ) => {
    out.push([`${what} n`, o.total_questions ?? o.n ?? null, l.n]);
    out.push([`${what} coverage`, num(o.coverage_rate ?? o.coverage ?? null), l.coverageComparable * 100]);
    out.push([`${what} match_rate`, num(o.match_rate), l.matchPartial * 100]);
    out.push([`${what} mean_absolute_error`, num(o.mean_absolute_error), l.mae]);
    out.push([`${what} mean_percentage_error`, num(o.mean_percentage_error), l.mpe]);
  };
  rates(`${name} overall`, e.overall, s);
  assert.deepEqual(
    s.bySource.map((b) => b.blockId),
    e.by_source.map(([k]) => k),
    `${name}: sources and their order`,
  );
  s.bySource.forEach((b, i) => rates(`${name} source ${b.blockId}`, e.by_source[i]![1], b));
  return out;
}

describe('LongDA official code on adversarial results files (issue 47 items 1–7)', () => {
  let total = 0;
  for (const [name, e] of Object.entries(EXP.files)) {
    it(`${name}: every row and figure equal bit for bit under the official preset`, () => {
      const { queries, answers } = parseLongtaAnswers(readFileSync(join(DIR, name), 'utf8'), name);
      const s = scoreLongda(queries, answers, official());
      assert.deepEqual(
        s.officialErrors.map((a) => ({ row: a.row, q_id: a.qId, error: a.error })),
        e.aborted_rows,
        `${name}: rows where the official code raises`,
      );
      if (e.aborted_rows.length) assert.equal(s.changedBy.official_errors, e.aborted_rows.length);
      const bad = pairs(name, s, e).filter(([, o, l]) => !Object.is(o, l));
      total += pairs(name, s, e).length;
      assert.deepEqual(bad, [], `${name}: figures differing from the official code`);
    });
  }
  it('covers at least 100 rows and the whole run of the edges file aborts in the official code', () => {
    assert.ok(Object.values(EXP.files).reduce((a, f) => a + f.rows.length + f.aborted_rows.length, 0) >= 100);
    assert.match(EXP.files['edges.csv']!.full_file_error ?? '', /^OverflowError/);
    assert.ok(total > 0);
  });
});
