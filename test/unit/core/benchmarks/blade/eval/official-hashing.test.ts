/**
 * Issue 21 items 8 and 9: column value hashing and one-input-many-outputs units as BLADE's own code does them.
 * Expected hashes: test/fixtures/official-parity/blade/hashing/expected_hashes.json, written by BLADE's
 * `nb/df_hash.py` DFValueHasher at behavioral-data/BLADE 6118fa8d (command in that folder's official_hashes.py).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  startBladePython,
  type BladePython,
  type FrameState,
} from '../../../../../../src/core/benchmarks/blade/eval/python.ts';
import {
  onePerInputSet,
  submissionSpecs,
  unitsFromExecution,
} from '../../../../../../src/core/benchmarks/blade/eval/transforms.ts';
import { DEFAULT_DATAFLOW_OPTIONS } from '../../../../../../src/core/benchmarks/blade/eval/dataflow.ts';

const dir = fileURLToPath(new URL('../../../../../fixtures/official-parity/blade/hashing/', import.meta.url));
const data = `${dir}data.csv`;
const expected = JSON.parse(readFileSync(`${dir}expected_hashes.json`, 'utf8')) as Record<
  'raw' | 'dates',
  Record<string, string>
>;
const DATES = "df['visit_date'] = pd.to_datetime(df['visit_date'])";

describe('BLADE value hashing (issue 21 item 8)', () => {
  let py: BladePython;
  before(async () => {
    py = await startBladePython();
  });
  after(async () => py.close());

  const hashes = async (p: BladePython, code: string): Promise<Record<string, string>> => {
    const [st] = await p.runPath(data, [{ id: 's', code }]);
    assert.equal(st?.kind, 'frame', JSON.stringify(st));
    return (st as FrameState).hashes;
  };

  it('value_hashing=blade (the default) equals BLADE DFValueHasher on every column, raw and with parsed dates', async () => {
    assert.deepEqual(await hashes(py, 'df = df'), expected.raw);
    assert.deepEqual(await hashes(py.withValueHashing('blade'), DATES), expected.dates);
  });

  it('value_hashing=vectorised (Loupe 0.1) differs where the issue says: half-way floats, dates with missing values', async () => {
    const v = py.withValueHashing('vectorised');
    const raw = await hashes(v, 'df = df');
    const dates = await hashes(v, DATES);
    assert.notEqual(
      raw.x,
      expected.raw.x,
      'Series.round(5) rounds 12.345675, 0.500005, 7.123455 differently from round()',
    );
    assert.equal(raw.y, expected.raw.y, 'floats without half-way values hash the same');
    assert.equal(raw.id, expected.raw.id);
    assert.notEqual(dates.visit_date, raw.visit_date, 'raw dates and pd.to_datetime of them no longer match');
    assert.notEqual(dates.visit_date, expected.dates.visit_date);
    // and the modes do not leak into each other through the driver's memo of identical columns
    assert.deepEqual(await hashes(py, 'df = df'), expected.raw);
  });
});

describe('BLADE units with one input set and several outputs (issue 21 item 9)', () => {
  it('onePerInputSet keeps the last output of an input set at the place of the first, as a Python dict does', () => {
    const m: [string[], string][] = [
      [['g'], 'g_a'],
      [['x', 'y'], 's'],
      [['g'], 'g_b'],
      [['y', 'x'], 't'],
      [['g'], 'g_c'],
    ];
    assert.deepEqual(onePerInputSet(m), [
      [['g'], 'g_c'],
      [['x', 'y'], 't'],
    ]);
  });

  it('a get_dummies unit: all outputs (unit_outputs=all) vs one per input set (one-per-input-set)', async () => {
    const py = await startBladePython();
    try {
      const split = await py.split(data, "df = pd.get_dummies(df, columns=['group'])\ndf['z'] = df['x'] + df['y']");
      assert.equal(split.status, 'ok', split.error);
      const units = unitsFromExecution(split.units);
      const outputs = (o: typeof DEFAULT_DATAFLOW_OPTIONS) =>
        [...submissionSpecs(units, o).specs.values()].flatMap((s) => s.mapping.map(([, out]) => out)).filter(Boolean);
      const all = outputs(DEFAULT_DATAFLOW_OPTIONS);
      const one = outputs({ ...DEFAULT_DATAFLOW_OPTIONS, unitOutputs: 'one-per-input-set' });
      assert.ok(all.includes('group_a') && all.includes('group_b') && all.includes('group_c'), all.join(','));
      assert.equal(all.length - one.length, 2, `${all.join(',')} vs ${one.join(',')}`);
      assert.ok(one.includes('group_c') && !one.includes('group_a') && one.includes('z'), one.join(','));
    } finally {
      await py.close();
    }
  });
});
