/**
 * `loupe score --blade-outputs` (issue 21): BLADE's own output files (multirun_analyses.json) scored against the
 * shared BLADE ground truth without a store, with recorded verdicts keyed by BLADE's native ids.
 * Fixture: test/fixtures/official-parity/blade/run-folder (analyses written for this test, not BLADE's).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { main } from '../../../src/cli/main.ts';
import { sharedData } from '../../helpers/shared.ts';

const FIX = fileURLToPath(new URL('../../fixtures/official-parity/blade/run-folder/', import.meta.url));
const ROOT = sharedData('blade', 'datasets');

async function score(args: string[], cwd = FIX): Promise<{ rc: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const rc = await main(['score', ...args], {
    out: (s: string) => out.push(s),
    err: (s: string) => err.push(s),
    env: {},
    cwd,
  } as never);
  return { rc, out: out.join(''), err: err.join('') };
}

type Json = {
  judged: { done: number; exact: number; errors: number };
  notRecorded: number;
  missingVerdicts: string[];
  runs: Array<{ run: string; status: string; precision: Record<string, number> }>;
  aggregate: {
    point: {
      perType: Record<string, { precision: number; coverage: number; f1: number | string }>;
      weightedF1: number | string;
    };
    changedBy: Record<string, number>;
  };
  options: Record<string, unknown>;
};

describe('loupe score --blade-outputs (BLADE harness output, no store)', () => {
  it('reads a multirun folder in key order, failures as generation failures; recorded verdicts decide the semantic matches', async () => {
    const r = await score(['--blade-outputs', 'hurricane', '--root', ROOT, '--judge', 'file:verdicts.jsonl', '--json']);
    assert.equal(r.rc, 0, r.err);
    const j = JSON.parse(r.out) as Json;
    assert.deepEqual(
      j.runs.map((x) => [x.run, x.status]),
      [
        ['0', 'ok'],
        ['1', 'generation_failed'],
        ['2', 'ok'],
      ],
    );
    // 7 recorded lines answered, 4 questions had none (reported with their native ids), 1 identical model name
    assert.deepEqual(j.judged, { done: 7, exact: 1, errors: 4 });
    assert.equal(j.notRecorded, 4);
    assert.ok(
      j.missingVerdicts.some((m) => m.includes('"truth":"Control: year of hurricane."')),
      j.missingVerdicts.join('\n'),
    );
    assert.equal(j.runs[0]!.precision.cvar, 1, 'all three conceptual variables of run 0 matched by recorded verdicts');
    assert.equal(j.runs[2]!.precision.cvar, 1);
    // official preset: the generation failure is appended (counted by changedBy) and F1 with p = c = 0 is NaN
    assert.equal(j.options.generation_failures, 'append');
    assert.equal(j.aggregate.changedBy.generation_failures, 1);
    assert.equal(j.aggregate.point.perType.cvar!.precision, 2 / 3, 'mean over the 3 runs, the failure as 0');
    assert.equal(j.aggregate.point.perType.modelCvar!.f1, 'NaN');
    assert.equal(j.aggregate.point.weightedF1, 'NaN');
  });

  it('without a judge only identical texts match; --preset paper gives finite F1', async () => {
    const none = JSON.parse((await score(['--blade-outputs', 'hurricane', '--root', ROOT, '--json'])).out) as Json;
    assert.equal(none.runs[0]!.precision.cvar, 0);
    const paper = JSON.parse(
      (
        await score([
          '--blade-outputs',
          'hurricane',
          '--root',
          ROOT,
          '--judge',
          'file:verdicts.jsonl',
          '--preset',
          'paper',
          '--json',
        ])
      ).out,
    ) as Json;
    assert.equal(paper.aggregate.point.perType.modelCvar!.f1, 0);
    assert.equal(typeof paper.aggregate.point.weightedF1, 'number');
  });

  it('bad input names the file or the dataset; the other datasets are still scored', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-bo-'));
    try {
      writeFileSync(join(dir, 'bad.json'), JSON.stringify({ analyses: [] }));
      const bad = await score(['--blade-outputs', 'bad.json', '--root', ROOT], dir);
      assert.notEqual(bad.rc, 0);
      assert.match(bad.err, /bad\.json.*dataset_name/);
      mkdirSync(join(dir, 'nowhere'));
      writeFileSync(
        join(dir, 'nowhere', 'multirun_analyses.json'),
        JSON.stringify({ dataset_name: 'nowhere', n: 1, analyses: { 0: [2, 'x'] } }),
      );
      const mixed = await score(
        [
          '--blade-outputs',
          'nowhere',
          '--blade-outputs',
          join(FIX, 'hurricane'),
          '--root',
          ROOT,
          '--judge',
          `file:${join(FIX, 'verdicts.jsonl')}`,
        ],
        dir,
      );
      assert.equal(mixed.rc, 1, 'a dataset without ground truth fails the command');
      assert.match(mixed.out, /nowhere: not scored \(.*annotations\.csv/);
      assert.match(mixed.out, /hurricane #0: ok/);
      const noRoot = await score(['--blade-outputs', 'nowhere'], dir);
      assert.equal(noRoot.rc, 2);
      assert.match(noRoot.err, /--root/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
