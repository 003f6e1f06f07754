/**
 * The BLADE reference agent on every shared dataset that has data: the ground-truth path is submitted
 * through the real loop and must validate; then each run is replayed in a fresh sandbox and must show
 * no differences. One kernel per phase is shared across datasets (each run works in its own folder).
 */
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type RunStore } from '../../../../../src/core/store/run-store.ts';
import { loadSuite } from '../../../../../src/core/benchmarks/index.ts';
import type { Block } from '../../../../../src/core/suites/types.ts';
import { PythonKernel } from '../../../../../src/core/kernel/index.ts';
import type { KernelLike } from '../../../../../src/core/agent/types.ts';
import { BladeReferenceModel, bladeReferencePaths } from '../../../../../src/core/benchmarks/blade/reference.ts';
import { bladeState, createBladeToolSet } from '../../../../../src/core/benchmarks/blade/toolset.ts';
import { replayRun } from '../../../../../src/core/runs/replay-run.ts';
import { sharedData } from '../../../../helpers/shared.ts';
import { runWithModel } from '../../../../helpers/toolsets.ts';

/** A kernel shared by several runs: `close()` does nothing; `enter(dir)` switches the working folder. */
function shared(k: PythonKernel) {
  return {
    kernel: k,
    async enter(dir: string): Promise<KernelLike> {
      const r = await k.execute(`import os; os.chdir(${JSON.stringify(dir)})`);
      assert.equal(r.status, 'ok', r.stderr);
      return {
        execute: (c, o) => k.execute(c, o),
        interrupt: () => k.interrupt(),
        restart: () => k.restart(),
        close: async () => undefined,
        get info() {
          return k.info;
        },
      } as KernelLike;
    },
  };
}

describe('BLADE reference agent on every shared dataset with data', () => {
  let store: RunStore;
  let blocks: Block[];
  let root = '';
  let k1: PythonKernel;
  let k2: PythonKernel;
  before(async () => {
    store = openStore(':memory:');
    blocks = (await loadSuite('blade', sharedData('blade', 'datasets'))).blocks.filter(
      (b) => b.runnable && b.hidden.annotations,
    );
    root = mkdtempSync(join(tmpdir(), 'loupe-blade-ref-'));
    for (const b of blocks) {
      mkdirSync(join(root, b.id));
      symlinkSync(b.visible.data[0]!.path, join(root, b.id, 'data.csv'));
    }
    const opts = {
      cwd: root,
      sandbox: 'bubblewrap' as const,
      readOnlyPaths: [sharedData('blade', 'datasets')],
      writablePaths: [root],
    };
    [k1, k2] = await Promise.all([PythonKernel.start(opts), PythonKernel.start(opts)]);
  });
  after(async () => {
    await Promise.all([k1?.close(), k2?.close()]);
    store?.close();
  });

  it('builds candidate paths from the annotations (ancestors before dependants)', () => {
    const hurricane = blocks.find((b) => b.id === 'hurricane')!;
    const paths = bladeReferencePaths(hurricane);
    assert.ok(paths.length >= 1);
    const p = paths[0]!;
    assert.equal(p.conceptual_variables.filter((v) => v.type === 'DV').length, 1);
    assert.ok(p.conceptual_variables.some((v) => v.type === 'IV'));
    assert.match(p.transform_code, /^def transform\(df\):/);
    assert.match(p.model_code, /^def model\(df\):[\s\S]*return model\n$/);
  });

  it('every runnable dataset: a ground-truth path validates through submit_analysis; replay matches', async () => {
    // Every dataset folder on disk with both data.csv and annotations.csv (the reference needs both).
    const onDisk = readdirSync(sharedData('blade', 'datasets'))
      .filter((d) =>
        ['data.csv', 'annotations.csv'].every((f) => existsSync(join(sharedData('blade', 'datasets'), d, f))),
      )
      .sort();
    assert.deepEqual(blocks.map((b) => b.id).sort(), onDisk);
    assert.ok(onDisk.length >= 8);
    const s1 = shared(k1);
    const s2 = shared(k2);
    const summary: string[] = [];
    for (const b of blocks) {
      const dir = join(root, b.id);
      const runId = `ref-${b.id}`;
      const res = await runWithModel({
        store,
        runId,
        toolSet: createBladeToolSet(),
        block: b,
        ws: dir,
        model: new BladeReferenceModel(b),
        startKernel: () => s1.enter(dir),
        agent: 'reference',
      });
      assert.equal(res.status, 'finished', `${b.id}: ${res.reason}`);
      const st = bladeState(await store.getExtraState(runId));
      assert.ok(st.final, `${b.id}: no accepted submission`);
      summary.push(
        `${b.id}:${st.submissions.length}:${/built by (.*?)\)\.$/.exec((await store.getSteps(runId)).at(-1)!.assistant.content ?? '')?.[1]}`,
      );
      const rep = await replayRun({ store, runId, startKernel: () => s2.enter(dir) });
      assert.ok(rep.total >= 2, `${b.id}: replayed ${rep.total} cells`);
      assert.equal(rep.allMatch, true, `${b.id}: ${JSON.stringify(rep.actions.filter((a) => !a.match))}`);
    }
    console.log(`reference submissions until valid: ${summary.join(' ')}`);
  });
});
