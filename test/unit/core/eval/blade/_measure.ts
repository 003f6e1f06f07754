import { startBladePython } from '../../../../../src/core/eval/blade/python.ts';
import { loadBladeGroundTruth, scoreBladeRun } from '../../../../../src/core/eval/blade/score.ts';
import { referencePath } from '../../../../../src/core/eval/blade/reference-path.ts';
const py = await startBladePython();
for (const ds of ['affairs','amtl','caschools','hurricane','mortgage','panda_nuts','reading','teachingratings']) {
  const t0 = performance.now();
  const gt = await loadBladeGroundTruth('/work/shared/data/blade/datasets/' + ds, py);
  const t1 = performance.now();
  const row: string[] = [ds, `${gt.transforms.paths.length} paths`, `numTspecs ${gt.counts.numTspecs}`, `GT ${(t1 - t0).toFixed(0)} ms`];
  for (const scope of ['auto', 'single-path', 'model'] as const) {
    const rp = referencePath(gt.annotations, { scope });
    const t2 = performance.now();
    const s = await scoreBladeRun({ analysis: rp.analysis }, gt, { python: py });
    const m = s.metrics;
    row.push(`${scope}(${rp.scope}) tv ${m.transformValue.matched}/${m.transformValue.denominator} tg ${m.transformGraph.matched}/${m.transformGraph.denominator} cov ${m.transformValue.gtItems.length}/${gt.counts.numTspecs} mc ${m.modelCvar.precision} ${(performance.now() - t2).toFixed(0)}ms`);
  }
  console.log(row.join(' | '));
}
await py.close();
