/**
 * Issue 40: a benchmark is its folder plus one registry line. The test-only count-rows benchmark declares its own
 * item type, hidden payload, loader option and item view in test/fixtures/benchmarks/count-rows/ (and is registered by
 * one line in test/fixtures/benchmarks/register.ts); the loader, the item view, the task workspace's public items,
 * the run and the score reach it through its definition — no file of src/ names it or its item type.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import '../../../fixtures/benchmarks/register.ts';
import { loadSuite, publicItems } from '../../../../src/core/benchmarks/index.ts';
import { getBenchmark, itemTypeView } from '../../../../src/core/benchmarks/registry.ts';
import { itemGroundTruth, itemView } from '../../../../src/app/item/item-view.ts';
import { LoupeInputError } from '../../../../src/core/util/errors.ts';
import { repoRoot } from '../../../helpers/shared.ts';

const ROOT = join(repoRoot, 'test', 'fixtures', 'benchmarks', 'count-rows');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : /\.(ts|mjs|js|json)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

describe('a benchmark is its folder plus one registry line (count-rows)', () => {
  it('loads blocks of its own item type with its own hidden payload', async () => {
    const suite = await loadSuite('count-rows', ROOT, {});
    const b = suite.blocks.find((x) => x.id === 'seven')!;
    assert.deepEqual(b.items, [
      {
        type: 'count-rows-file',
        id: 'q1',
        file: 'data/seven.csv',
        text: 'How many data rows (header excluded) does data/seven.csv have?',
      },
    ]);
    assert.equal((b.hidden as { rows?: number }).rows, 7);
    assert.deepEqual(getBenchmark('count-rows').listingFields(b), { rows: 7 });
  });

  it('reads its own loader option, declared in its folder; a bad value names the option', async () => {
    const def = getBenchmark('count-rows');
    assert.deepEqual(
      def.loadOptions.map((o) => o.key),
      ['countRowsHeader'],
    );
    const none = await loadSuite('count-rows', ROOT, { countRowsHeader: 0 });
    assert.deepEqual(
      none.blocks.map((x) => [x.id, (x.hidden as { rows?: number }).rows]),
      [
        ['seven', 8],
        ['small', 4],
      ],
    );
    await assert.rejects(
      loadSuite('count-rows', ROOT, { countRowsHeader: -1 }),
      (e: unknown) => e instanceof LoupeInputError && e.subject === 'countRowsHeader',
    );
  });

  it('shows its items through its own item view: icon, label, question, and the count only when revealed', async () => {
    const suite = await loadSuite('count-rows', ROOT, {});
    const b = suite.blocks.find((x) => x.id === 'small')!;
    const item = b.items[0]!;
    const view = itemTypeView(b.suite, item)!;
    assert.equal(view.icon, 'symbol-number');
    assert.deepEqual(view.describe(item), {
      label: 'Rows of data/small.csv',
      detail: 'How many data rows (header excluded) does data/small.csv have?',
    });
    const hidden = itemView(b, 'q1', { reveal: false, suiteTitle: suite.title, hasGroundTruthView: false });
    assert.equal(hidden.title, 'Rows of data/small.csv');
    assert.deepEqual(hidden.fields, [{ name: 'File', value: 'data/small.csv', code: true }]);
    assert.equal(hidden.groundTruth, null);
    assert.equal(hidden.hasGroundTruth, true);
    assert.deepEqual(
      itemView(b, 'q1', { reveal: true, suiteTitle: suite.title, hasGroundTruthView: false }).groundTruth,
      [{ name: 'Data rows', value: '3' }],
    );
    assert.deepEqual(itemGroundTruth(b, item), [{ name: 'Data rows', value: '3' }]);
    // the agent's view of the item: the benchmark hides no field of it (the count is in `hidden`)
    assert.deepEqual(publicItems(b), b.items);
  });

  it('an item type no benchmark describes shows its id and no ground truth (nothing switches on item types)', async () => {
    const suite = await loadSuite('count-rows', ROOT, {});
    const b = {
      ...suite.blocks[0]!,
      items: [{ type: 'not-registered', id: 'x1' }],
    } as unknown as (typeof suite.blocks)[0];
    assert.equal(itemTypeView(b.suite, b.items[0]!), undefined);
    const v = itemView(b, 'x1', { reveal: true, suiteTitle: '', hasGroundTruthView: false });
    assert.equal(v.title, 'x1');
    assert.deepEqual(v.groundTruth, []);
  });

  it('no file of src/ (nor package.json, nor the ESLint setup) names the benchmark or its item type', () => {
    const files = [
      ...sourceFiles(join(repoRoot, 'src')),
      ...sourceFiles(join(repoRoot, 'webview')),
      join(repoRoot, 'package.json'),
      join(repoRoot, 'eslint.config.mjs'),
    ];
    assert.ok(files.length > 100);
    const naming = files.filter((f) => /count-rows|countRows/.test(readFileSync(f, 'utf8')));
    assert.deepEqual(naming, []);
  });
});
