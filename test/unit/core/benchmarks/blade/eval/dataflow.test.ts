/**
 * Expansion and column-graph oracles from BLADE's `tests/test_transform_eval.py` (TestProcessGraph),
 * spec §1.4.2 / §5.2: exact expanded graphs and column graphs (edge types included) for a
 * groupby → post_groupby → filter chain, two sibling filters, and a filter → impute → derive chain.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  columnGraph,
  expandGraph,
  pathGraphsFromLeaf,
  POST_GROUPBY,
  type TSpec,
} from '../../../../../../src/core/benchmarks/blade/eval/dataflow.ts';

const S = (id: string, name: string, verb: string, deps: string[][], mapping: [string[], string][] = []): TSpec => ({
  id,
  name,
  verb,
  code: '',
  mapping,
  branches: deps,
});
const ORIG = ['O1', 'O2', 'O3', 'O4'];
const ROOT = S('ROOT', 'ROOT', '', []);
const GROUPBY = S('GROUPBY', 'GROUPBY', 'groupby', [['ROOT']]);
const PG = S(
  'POST_GROUPBY',
  'POST_GROUPBY',
  POST_GROUPBY,
  [['GROUPBY']],
  [
    [['O1'], 'col1'],
    [['O2'], 'col2'],
    [['O3'], 'col3'],
    [['O4'], 'col4'],
  ],
);

const TEST_SPECS = [
  ROOT,
  GROUPBY,
  PG,
  S('F1', 'Filter1', 'filter', [['POST_GROUPBY']]),
  S('C', 'C', 'derive', [['F1']], [[['col1', 'col2'], 'col5']]),
  S('D', 'D', 'derive', [['F1']], [[['col3', 'col4'], 'col6']]),
  S(
    'E',
    'E',
    'derive',
    [['C', 'D']],
    [
      [['col5', 'col6'], 'col7'],
      [['col6'], 'col8'],
    ],
  ),
  S('F2', 'Filter2', 'filter', [['E']]),
  S('G', 'G', 'derive', [['F2']], [[['col5', 'col8'], 'col9']]),
];
const TEST_SPECS2 = [
  ROOT,
  GROUPBY,
  PG,
  S('F1', 'Filter1', 'filter', [['POST_GROUPBY']], [[['col2'], '']]),
  S('F2', 'Filter2', 'filter', [['POST_GROUPBY']], [[['col2'], '']]),
  S('C', 'C', 'derive', [['F1', 'F2']], [[['col1', 'col2'], 'col5']]),
];
const TEST_SPECS3 = [
  ROOT,
  S('F1', 'Filter1', 'filter', [['ROOT']], [[['O1'], '']]),
  S('Impute', 'impute', 'impute', [['F1']], [[['O2'], 'O2']]),
  S('C', 'C', 'derive', [['Impute']], [[['O1', 'O2'], 'col5']]),
];

const d = (type: string) => ({ type });
const RESULT2_COLSG = {
  O3__ROOT: { O3__GROUPBY: d('data') },
  O1__ROOT: { O1__GROUPBY: d('data') },
  O2__ROOT: { O2__GROUPBY: d('data') },
  O4__ROOT: { O4__GROUPBY: d('data') },
  O3__GROUPBY: { col3__POST_GROUPBY__post_groupby_col3: d('data') },
  O1__GROUPBY: { col1__POST_GROUPBY__post_groupby_col1: d('data') },
  O2__GROUPBY: { col2__POST_GROUPBY__post_groupby_col2: d('data') },
  O4__GROUPBY: { col4__POST_GROUPBY__post_groupby_col4: d('data') },
  col1__POST_GROUPBY__post_groupby_col1: { col1__F2: d('data') },
  col2__POST_GROUPBY__post_groupby_col2: {
    col2__F2: d('input + data'),
    col1__F2: d('input'),
    col3__F2: d('input'),
    col4__F2: d('input'),
  },
  col3__POST_GROUPBY__post_groupby_col3: { col3__F2: d('data') },
  col4__POST_GROUPBY__post_groupby_col4: { col4__F2: d('data') },
  col4__F2: { col4__F1: d('data') },
  col2__F2: { col2__F1: d('input + data'), col1__F1: d('input'), col3__F1: d('input'), col4__F1: d('input') },
  col3__F2: { col3__F1: d('data') },
  col1__F2: { col1__F1: d('data') },
  col4__F1: {},
  col2__F1: { col5__C__derive_col5: d('data') },
  col3__F1: {},
  col1__F1: { col5__C__derive_col5: d('data') },
  col5__C__derive_col5: {},
};
const RESULT2_EX_G = {
  ROOT: { GROUPBY: {} },
  GROUPBY: {
    POST_GROUPBY__post_groupby_col1: {},
    POST_GROUPBY__post_groupby_col2: {},
    POST_GROUPBY__post_groupby_col3: {},
    POST_GROUPBY__post_groupby_col4: {},
  },
  POST_GROUPBY__post_groupby_col1: { F2: {} },
  POST_GROUPBY__post_groupby_col2: { F2: {} },
  POST_GROUPBY__post_groupby_col3: { F2: {} },
  POST_GROUPBY__post_groupby_col4: { F2: {} },
  F2: { F1: {} },
  F1: { C__derive_col5: {} },
  C__derive_col5: {},
};
const RESULT3_EX_G = {
  ROOT: { F1: {} },
  F1: { Impute__impute_O2: {}, C__derive_col5: {} },
  Impute__impute_O2: { C__derive_col5: {} },
  C__derive_col5: {},
};
const RESULT3_COLSG = {
  O4__ROOT: { O4__F1: d('data') },
  O1__ROOT: { O1__F1: d('input + data'), O2__F1: d('input'), O3__F1: d('input'), O4__F1: d('input') },
  O2__ROOT: { O2__F1: d('data') },
  O3__ROOT: { O3__F1: d('data') },
  O4__F1: {},
  O1__F1: { col5__C__derive_col5: d('data') },
  O2__F1: { O2__Impute__impute_O2: d('data') },
  O3__F1: {},
  O2__Impute__impute_O2: { col5__C__derive_col5: d('data') },
  col5__C__derive_col5: {},
};

const specsOf = (a: TSpec[]) => new Map(a.map((s) => [s.id, s]));
function build(a: TSpec[], leaf: string, withInput: boolean) {
  const specs = specsOf(a);
  const [path] = pathGraphsFromLeaf(specs.get(leaf)!, specs);
  const ex = expandGraph(path!, specs, ORIG, new Map());
  return { path: path!, ex, cols: columnGraph(ex, withInput, 0).g };
}

describe('BLADE expansion and column graphs (tests/test_transform_eval.py::TestProcessGraph)', () => {
  it('test_ex_g_and_col_g: 13 expanded nodes / 17 edges, 29 column nodes / 29 edges, ancestor spec counts 6 / 7 / 10', () => {
    const { ex, cols } = build(TEST_SPECS, 'G', false);
    assert.equal(ex.g.nodes.size, 13);
    assert.equal(ex.g.edgeCount(), 17);
    assert.equal(cols.nodes.size, 29);
    assert.equal(cols.edgeCount(), 29);
    const parentSpecs = (name: string) => {
      const nid = [...cols.nodes].find(([, a]) => a.expanded_spec_name === name)![0];
      return new Set([...cols.ancestors(nid), nid].map((n) => cols.nodes.get(n)!.expanded_spec_id)).size;
    };
    assert.equal(parentSpecs('derive_col5'), 6);
    assert.equal(parentSpecs('derive_col8'), 7);
    assert.equal(parentSpecs('derive_col7'), 10);
  });

  it('test_graph_hash_on_same_graph_but_diff_transform: exact path, expanded and column graph (with input edges)', () => {
    const { path, ex, cols } = build(TEST_SPECS2, 'C', true);
    assert.deepEqual(path.toDictOfDicts(), {
      C: {},
      F1: { C: {} },
      F2: { C: {} },
      POST_GROUPBY: { F2: {}, F1: {} },
      GROUPBY: { POST_GROUPBY: {} },
      ROOT: { GROUPBY: {} },
    });
    assert.deepEqual(ex.g.toDictOfDicts(), RESULT2_EX_G);
    assert.deepEqual(cols.toDictOfDicts(), RESULT2_COLSG);
  });

  it('test_impute: derive attached through impute after a filter; input edges from the filter key', () => {
    const { path, ex, cols } = build(TEST_SPECS3, 'C', true);
    assert.deepEqual(path.toDictOfDicts(), { C: {}, Impute: { C: {} }, F1: { Impute: {} }, ROOT: { F1: {} } });
    assert.deepEqual(ex.g.toDictOfDicts(), RESULT3_EX_G);
    assert.deepEqual(cols.toDictOfDicts(), RESULT3_COLSG);
  });
});
