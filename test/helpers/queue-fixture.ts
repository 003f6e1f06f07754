/** A small annotation queue for the tests of queue instructions and assignment (issue 43). */
import { annotationStoreOf } from '../../src/core/annotations/index.ts';
import type { RunStore } from '../../src/core/store/types.ts';

/** Four claim-support items of runs r1 (a, b) and r2 (c, d) in one sampled queue. */
export async function seedQueue(store: RunStore): Promise<string> {
  const ann = annotationStoreOf(store);
  const ids: string[] = [];
  for (const [i, run] of [
    ['a', 'r1'],
    ['b', 'r1'],
    ['c', 'r2'],
    ['d', 'r2'],
  ] as const) {
    const input = { claim: `claim ${i}`, evidence: 'e' };
    await ann.putItem({
      id: `it-${i}`,
      subject: { kind: 'step', runId: run, from: 0, to: 0 },
      task: 'claim-support',
      input,
      inputHash: null,
      criterion: null,
      suite: 's',
      runId: run,
      itemRef: i,
      suiteVersion: 'v',
    } as never);
    ids.push(`it-${i}`);
  }
  return (await ann.openQueue({ kind: 'sampled', itemIds: ids }, { name: 'claims' })).id;
}
