import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadSuite, type BladeMcqItem } from '../../../../../src/core/benchmarks/index.ts';
import { judge } from '../../../../../src/core/benchmarks/blade/annotations.ts';
import { LoupeInputError } from '../../../../../src/core/util/errors.ts';
import { repoRoot, sharedData } from '../../../../helpers/shared.ts';

const tmp = mkdtempSync(join(tmpdir(), 'loupe-blade-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const fixture = join(repoRoot, 'test', 'fixtures', 'suites', 'blade-unseen', 'datasets');

describe('suites/blade on the real datasets (../shared)', async () => {
  const suite = await loadSuite('blade', sharedData('blade', 'datasets'));
  const byId = new Map(suite.blocks.map((b) => [b.id, b]));

  it('lists every dataset folder (12 here), runnable unless data.csv or info.json is missing', () => {
    assert.deepEqual(
      suite.blocks.map((b) => b.id),
      [
        'affairs',
        'amtl',
        'caschools',
        'conversation',
        'fertility',
        'hurricane',
        'mortgage',
        'panda_nuts',
        'reading',
        'soccer',
        'teachingratings',
        'toy',
      ],
    );
    assert.deepEqual(
      suite.blocks.filter((b) => !b.runnable).map((b) => b.id),
      ['conversation', 'soccer'],
    );
    for (const id of ['soccer', 'conversation']) {
      assert.ok(byId.get(id)!.problems.some((p) => /data\.csv missing/.test(p)));
    }
  });

  it('counts ground-truth decisions per dataset (matches spec §1.2 table)', () => {
    const row = (id: string) => {
      const c = byId.get(id)!.blade!.counts;
      return [
        c.cvars.IV,
        c.cvars.DV,
        c.cvars.Control,
        c.cvars.Moderator,
        c.models,
        c.uniqueModelNames,
        c.transforms,
        c.mcqCvar,
        c.mcqTransform,
      ];
    };
    assert.deepEqual(row('affairs'), [1, 1, 5, 2, 11, 5, 9, 1, 32]);
    assert.deepEqual(row('amtl'), [1, 1, 5, 0, 4, 2, 13, 0, 12]);
    assert.deepEqual(row('caschools'), [1, 1, 5, 0, 6, 1, 5, 2, 3]);
    assert.deepEqual(row('hurricane'), [1, 1, 2, 0, 18, 3, 6, 2, 3]);
    assert.deepEqual(row('mortgage'), [1, 1, 9, 1, 6, 2, 23, 0, 23]);
    assert.deepEqual(row('panda_nuts'), [3, 2, 3, 2, 73, 5, 11, 1, 23]);
    assert.deepEqual(row('reading'), [1, 2, 15, 0, 12, 3, 23, 6, 14]);
    assert.deepEqual(row('soccer'), [2, 2, 12, 0, 41, 9, 39, 0, 0]);
    assert.deepEqual(row('teachingratings'), [1, 1, 15, 1, 9, 2, 14, 8, 15]);
  });

  it('parses hurricane transforms with branches and column mappings, cvars, models and reviews', () => {
    const a = byId.get('hurricane')!.hidden.annotations!;
    const t = a.transforms.find((x) => x.specId === '1aa384acb32e449bb67e616cac8a76e5')!;
    assert.equal(t.verb, 'derive');
    assert.deepEqual(t.columnMappings, [{ inputs: ['masfem_mturk', 'masfem'], output: 'masfem_mean' }]);
    assert.equal(t.branches.length, 2);
    assert.deepEqual(t.branches[1]!.dependencies, ['ROOT_SPEC_ID']);
    assert.ok(a.transforms.some((x) => x.isRoot));
    const iv = a.conceptualVars.find((c) => c.variableType === 'IV')!;
    assert.equal(iv.concept, 'feminity metric of hurricane name');
    assert.deepEqual(iv.columnsOrig, ['masfem', 'masfem_mturk', 'gender_mf']);
    const m = a.models.find((x) => /alldeaths_boxcox ~ masfem_mturk/.test(x.code))!;
    assert.equal(m.specification, 'Linear Regression');
    assert.ok(m.columnsDerived.includes('alldeaths_boxcox'));
    assert.equal(a.transformReviews.length, 35);
    assert.equal(a.cvarReviews.length, 9);
    assert.ok(a.dependencyGraph);
  });

  it('sums review rows and labels across datasets', () => {
    let tr = 0;
    let cr = 0;
    const j = { justifiable: 0, unjustifiable: 0, unsure: 0 };
    for (const b of suite.blocks) {
      tr += b.blade!.counts.transformReviews;
      cr += b.blade!.counts.cvarReviews;
      for (const r of b.hidden.annotations?.transformReviews ?? []) j[r.judgement]++;
    }
    assert.equal(tr, 414);
    assert.equal(cr, 66);
    assert.equal(j.justifiable + j.unjustifiable + j.unsure, 414);
    assert.ok(j.justifiable > 0 && j.unjustifiable > 0);
  });

  it('exposes the dataset description and columns as visible, annotations and MCQs as hidden', () => {
    const b = byId.get('hurricane')!;
    assert.match(b.visible.researchQuestions![0]!, /feminine names/);
    assert.equal(b.visible.columns!.length, 14);
    assert.equal(b.visible.columns![0]!.name, 'ind');
    assert.deepEqual(
      b.visible.data.map((f) => f.rel),
      ['data.csv'],
    );
    assert.ok(b.hidden.files.some((f) => f.endsWith('annotations.csv')));
    assert.ok(b.hidden.files.some((f) => f.endsWith('mcq_dataset.json')));
    assert.ok(![...b.visible.data, ...b.visible.docs].some((f) => /annotations|mcq/.test(f.path)));
  });
});

describe('suites/blade-mcq on the real datasets', async () => {
  const suite = await loadSuite('blade-mcq', sharedData('blade', 'datasets'));
  it('has 8 runnable datasets with 145 MCQs, all 20 cvar MCQs of the spec among them', () => {
    const run = suite.blocks.filter((b) => b.runnable);
    assert.equal(run.length, 8);
    const items = run.flatMap((b) => b.items as BladeMcqItem[]);
    assert.equal(items.length, 145);
    assert.equal(items.filter((i) => i.family === 'cvar').length, 20);
    assert.ok(items.every((i) => i.options.length >= 2 && i.options.length <= 4));
    assert.ok(
      items.every((i) => !('correctLabel' in i)),
      'answer key must not be in visible items',
    );
  });
  it('locates the correct option of the hurricane cvar MCQ (third, LLM-generated)', () => {
    const b = suite.blocks.find((x) => x.id === 'hurricane')!;
    const q = b.hidden.mcqs!.mcqs[0]!;
    assert.equal(q.mcType, 'select_neg');
    assert.equal(q.correctLabel, 'C');
    assert.equal(q.options[2]!.isLlmGenerated, true);
  });
});

describe('suites/blade on datasets not seen before (test/fixtures)', async () => {
  const suite = await loadSuite('blade', fixture);
  it('reads a tiny dataset with every spec type and an old-format dataset', () => {
    assert.deepEqual(
      suite.blocks.map((b) => [b.id, b.runnable]),
      [
        ['legacy', false],
        ['plants', true],
      ],
    );
    const p = suite.blocks[1]!;
    assert.deepEqual(p.problems, []);
    const a = p.hidden.annotations!;
    assert.deepEqual(p.blade!.counts.cvars, { IV: 1, DV: 1, Control: 0, Moderator: 1, total: 3 });
    assert.equal(p.blade!.counts.transforms, 2);
    assert.equal(p.blade!.counts.uniqueModelNames, 1);
    const mod = a.conceptualVars.find((c) => c.effectiveType === 'Moderator')!;
    assert.equal(mod.on, 'amount of light');
    assert.deepEqual(
      a.transforms.find((t) => t.specId === 't_light')!.branches.map((b) => b.dependencies),
      [['t_filter'], ['ROOT_SPEC_ID']],
    );
    assert.deepEqual(a.transforms.find((t) => t.specId === 't_filter')!.columnMappings, [
      { inputs: ['water'], output: '' },
    ]);
    assert.deepEqual(a.models[0]!.columnsDerived, ['light_bin']);
    assert.deepEqual(
      a.transformReviews.map((r) => r.judgement),
      ['unjustifiable', 'justifiable'],
    );
    assert.deepEqual(
      a.cvarReviews.map((r) => r.judgement),
      ['unsure'],
    );
    const legacy = suite.blocks[0]!;
    assert.deepEqual(legacy.hidden.annotations!.transforms[1]!.branches, [
      { dependencies: ['ROOT_SPEC_ID'], condition: '' },
    ]);
    assert.ok(legacy.problems.some((x) => /data\.csv missing/.test(x)));
  });
  it('reads its MCQs as the blade-mcq task type', async () => {
    const s = await loadSuite('blade-mcq', fixture);
    const p = s.blocks.find((b) => b.id === 'plants')!;
    assert.deepEqual(
      p.items.map((i) => i.id),
      ['cvar-1', 'transform-1'],
    );
    assert.deepEqual(
      p.hidden.mcqs!.mcqs.map((q) => q.correctLabel),
      ['A', 'B'],
    );
  });
});

describe('suites/blade bad input', () => {
  function copyPlants(name: string): string {
    const root = join(tmp, name);
    cpSync(fixture, root, { recursive: true });
    return root;
  }
  it('reports broken JSON in an annotation cell by file, line and column; other specs and blocks usable', async () => {
    const root = copyPlants('badjson');
    const f = join(root, 'plants', 'annotations.csv');
    writeFileSync(f, readFileSync(f, 'utf8').replace('{""spec_name"": ""light_bin""', '{""spec_name"": light_bin'));
    const s = await loadSuite('blade', root);
    const p = s.blocks.find((b) => b.id === 'plants')!;
    assert.ok(
      p.problems.some((x) => x.startsWith(`${f}:5 column transform_spec_json: invalid JSON`)),
      p.problems.join('\n'),
    );
    assert.equal(p.hidden.annotations!.transforms.length, 2, 'ROOT + filter still parsed');
    assert.equal(p.hidden.annotations!.models.length, 2);
    assert.equal(p.runnable, true);
  });
  it('names the physical line of a bad row after annotation cells holding CRLF line breaks (BLADE files do)', async () => {
    const root = copyPlants('crlf');
    const f = join(root, 'plants', 'annotations.csv');
    const lines = readFileSync(f, 'utf8').split('\n');
    // Line 2's dependency graph spread over 4 physical lines with CRLF, as in BLADE's own files.
    lines[1] = lines[1]!
      .replace('{""directed"": true, ', '{\r\n  ""directed"": true,\r\n  ')
      .replace('""links"": ', '\r\n  ""links"": ');
    const text = lines.join('\n').replace('{""spec_name"": ""light_bin""', '{""spec_name"": light_bin');
    writeFileSync(f, text);
    const want = text.split('\n').findIndex((l) => l.includes('""spec_name"": light_bin')) + 1;
    assert.equal(want, 8);
    const p = (await loadSuite('blade', root)).blocks.find((b) => b.id === 'plants')!;
    assert.ok(
      p.problems.some((x) => x.startsWith(`${f}:${want} column transform_spec_json: invalid JSON`)),
      p.problems.join('\n'),
    );
  });
  it('says where data.csv is not UTF-8 (pandas would fail on it); the dataset stays listed', async () => {
    const root = copyPlants('latin1data');
    const f = join(root, 'plants', 'data.csv');
    const lines = readFileSync(f, 'utf8').split('\n');
    writeFileSync(
      f,
      Buffer.concat([Buffer.from(lines.slice(0, 3).join('\n') + '\n'), Buffer.from([0x43, 0x61, 0x66, 0xe9, 0x0a])]),
    );
    const p = (await loadSuite('blade', root)).blocks.find((b) => b.id === 'plants')!;
    assert.ok(
      p.problems.some((x) => x.startsWith(`${f}:4: not valid UTF-8`)),
      p.problems.join('\n'),
    );
  });
  it('reports a dataset folder holding no BLADE file instead of dropping it silently', async () => {
    const root = copyPlants('emptyds');
    mkdirSync(join(root, 'newdata'));
    const s = await loadSuite('blade', root);
    assert.deepEqual(s.blocks.map((b) => b.id).sort(), ['legacy', 'plants']);
    assert.ok(
      s.problems.some((x) => x.startsWith(`${join(root, 'newdata')}: none of`)),
      s.problems.join('\n'),
    );
  });
  it('keeps a transform with one odd mapping entry, reporting the entry; rejects an unknown variable type', async () => {
    const root = copyPlants('oddmapping');
    const f = join(root, 'plants', 'annotations.csv');
    writeFileSync(
      f,
      readFileSync(f, 'utf8')
        .replace('[[[""light""], ""light_bin""]]', '[[[""light""], ""light_bin""], ""oops""]')
        .replace('""variable_type"": ""DV""', '""variable_type"": ""Outcome""'),
    );
    const p = (await loadSuite('blade', root)).blocks.find((b) => b.id === 'plants')!;
    const t = p.hidden.annotations!.transforms.find((x) => x.specId === 't_light')!;
    assert.deepEqual(t.columnMappings, [{ inputs: ['light'], output: 'light_bin' }]);
    assert.ok(
      p.problems.some((x) => x.startsWith(`${f}:5 column transform_spec_json: input_cols_to_output_col_mapping[1]`)),
      p.problems.join('\n'),
    );
    assert.ok(
      p.problems.some((x) => x.startsWith(`${f}:7 column conceptual_spec_json: unknown variable_type 'Outcome'`)),
      p.problems.join('\n'),
    );
    assert.equal(p.blade!.counts.cvars.total, 2);
  });
  it('reports a malformed CSV row in annotations.csv by line', async () => {
    const root = copyPlants('badrow');
    const f = join(root, 'plants', 'annotations.csv');
    writeFileSync(f, readFileSync(f, 'utf8') + 'extra,"unterminated\n');
    const s = await loadSuite('blade', root);
    const p = s.blocks.find((b) => b.id === 'plants')!;
    assert.ok(
      p.problems.some((x) => x.startsWith(f) && /malformed CSV/i.test(x)),
      p.problems.join('\n'),
    );
  });
  it('skips an annotations.csv row with non-UTF-8 bytes naming file and line; the rest is parsed', async () => {
    const root = copyPlants('latin1');
    const f = join(root, 'plants', 'annotations.csv');
    const text = readFileSync(f, 'utf8');
    const i = text.indexOf('Drop plants');
    writeFileSync(
      f,
      Buffer.concat([
        Buffer.from(text.slice(0, i)),
        Buffer.from([0x44, 0x72, 0xf6, 0x70]),
        Buffer.from(text.slice(i + 4)),
      ]),
    );
    const s = await loadSuite('blade', root);
    const p = s.blocks.find((b) => b.id === 'plants')!;
    assert.ok(p.problems.includes(`${f}:4: not valid UTF-8; record skipped`), p.problems.join('\n'));
    assert.deepEqual(
      p.hidden.annotations!.transforms.map((t) => t.specId),
      ['ROOT_SPEC_ID', 't_light'],
    );
    assert.ok(p.problems.some((x) => /depends on unknown spec t_filter/.test(x)));
    assert.equal(p.hidden.annotations!.models.length, 2);
    assert.equal(s.blocks.length, 2);
  });
  it('reports broken info.json and broken mcq_dataset.json', async () => {
    const root = copyPlants('badinfo');
    writeFileSync(join(root, 'plants', 'info.json'), '{"research_questions": [');
    writeFileSync(join(root, 'plants', 'mcq_dataset.json'), '[]');
    const s = await loadSuite('blade-mcq', root);
    const p = s.blocks.find((b) => b.id === 'plants')!;
    assert.equal(p.runnable, false);
    assert.ok(p.problems.some((x) => x.startsWith(join(root, 'plants', 'info.json')) && /invalid JSON/.test(x)));
    assert.ok(
      p.problems.some((x) => x.startsWith(join(root, 'plants', 'mcq_dataset.json')) && /not a BLADE MCQ file/.test(x)),
    );
  });
  it('rejects an empty folder and a root that is not BLADE', async () => {
    const empty = join(tmp, 'empty');
    mkdirSync(empty);
    await assert.rejects(
      loadSuite('blade', empty),
      (e: unknown) => e instanceof LoupeInputError && /empty folder/.test(e.message),
    );
    await assert.rejects(
      loadSuite('blade', sharedData('longda', 'benchmark')),
      (e: unknown) => e instanceof LoupeInputError && /not a BLADE datasets/.test(e.message),
    );
  });
  it('judges review labels', () => {
    assert.equal(judge(['Yes', 'Yes', 'Yes']), 'justifiable');
    assert.equal(judge(['No', '', 'No']), 'unjustifiable');
    assert.equal(judge(['Yes', 'No', 'Unsure']), 'unsure');
    assert.equal(judge([]), 'unsure');
  });
});
