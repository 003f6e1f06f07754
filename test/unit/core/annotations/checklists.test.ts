/**
 * Expert-authored checklists (issue 15): versions with hash, author, time, parent and note; diffs; conflicts between
 * two experts; the native export read back by the suite loader; a DDR run re-scored against two versions with a
 * scripted judge, each score recording the version it used; the CLI end to end on the MIMIC-IV demo.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  activeChecklistItems,
  ChecklistConflictError,
  checklistHash,
  checklistStoreOf,
  diffChecklists,
  type AuthoredChecklistItem,
} from '../../../../src/core/annotations/checklists.ts';
import { loadSuite } from '../../../../src/core/benchmarks/index.ts';
import { getBenchmark } from '../../../../src/core/benchmarks/registry.ts';
import { parseChecklist } from '../../../../src/core/benchmarks/analystbench/load.ts';
import { criteriaFromChecklist } from '../../../../src/core/benchmarks/analystbench/score.ts';
import { CallbackJudge } from '../../../../src/core/eval/judges/index.ts';
import type { JudgeInput } from '../../../../src/core/eval/judges/types.ts';
import { scoreStoredRun } from '../../../../src/core/runs/score-stored-run.ts';
import { openStore } from '../../../../src/core/store/run-store.ts';
import { forEachEngine } from '../../../helpers/store-engines.ts';
import type { Block, Suite } from '../../../../src/core/suites/types.ts';
import { LoupeInputError } from '../../../../src/core/util/errors.ts';
import { main } from '../../../../src/cli/main.ts';
import { sharedData } from '../../../helpers/shared.ts';

const tmp = mkdtempSync(join(tmpdir(), 'loupe-checklists-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const KEY = { suite: 'ddr', suiteId: 'ddr:mimic-iv-demo', blockId: 'patient_10000032' };
const fact = (
  id: string,
  question: string,
  answer: string,
  extra: Partial<AuthoredChecklistItem> = {},
): AuthoredChecklistItem => ({
  id,
  kind: 'fact',
  question,
  answer,
  entity: '10000032',
  author: 'ann',
  updatedAt: '2026-01-01T00:00:00.000Z',
  ...extra,
});

forEachEngine((e) =>
  describe('annotations/checklists: versions', () => {
    it('saves versions with hash, author, parent and note; same content is not a new version; retired items stay, excluded', async () => {
      const s = await e.open(await e.fresh());
      const cs = checklistStoreOf(s);
      const v1 = await cs.save(KEY, {
        base: null,
        items: [fact('c1', 'What is the gender?', 'F'), fact('c2', 'How many admissions?', '4')],
        author: 'alice',
        note: 'first pass',
      });
      assert.equal(v1.created, true);
      assert.equal(v1.version.version, 1);
      assert.equal(v1.version.parent, null);
      assert.equal(v1.version.hash, checklistHash(v1.version.items));
      assert.equal(v1.version.items[0]!.author, 'alice', 'items are stamped with who saved them');
      const again = await cs.save(KEY, { base: 1, items: v1.version.items, author: 'bob' });
      assert.equal(again.created, false, 'identical content is not a new version');
      const v2 = await cs.save(KEY, {
        base: 1,
        items: [
          fact('c1', 'What is the gender?', 'F'),
          { ...fact('c2', 'How many admissions?', '4'), retired: true },
          fact('c3', 'Age at anchor?', '52'),
        ],
        author: 'bob',
        note: 'retire c2',
      });
      assert.equal(v2.version.version, 2);
      assert.equal(v2.version.parent, 1);
      assert.equal(v2.version.items.find((i) => i.id === 'c1')!.author, 'alice', 'an unchanged item keeps its author');
      assert.equal(v2.version.items.find((i) => i.id === 'c3')!.author, 'bob');
      assert.deepEqual(diffChecklists(v1.version.items, v2.version.items), {
        added: ['c3'],
        changed: [],
        retired: ['c2'],
        restored: [],
      });
      assert.deepEqual(
        activeChecklistItems(v2.version.items).map((i) => i.id),
        ['c1', 'c3'],
      );
      assert.deepEqual(
        (await cs.versions(KEY)).map((v) => [v.version, v.author, v.note]),
        [
          [1, 'alice', 'first pass'],
          [2, 'bob', 'retire c2'],
        ],
      );
      assert.equal((await cs.latest(KEY))!.version, 2);
      assert.equal((await cs.listLatest()).length, 1);
      await s.close();
    });

    it('two experts from the same base: different items merge, the same item is a conflict that shows the other change and saves nothing', async () => {
      const s = await e.open(await e.fresh());
      const cs = checklistStoreOf(s);
      const base = (
        await cs.save(KEY, {
          base: null,
          items: [fact('c1', 'Gender?', 'F'), fact('c2', 'Admissions?', '4')],
          author: 'alice',
        })
      ).version;
      // bob edits c1 from v1
      await cs.save(KEY, {
        base: 1,
        items: [fact('c1', 'Gender?', 'Female'), fact('c2', 'Admissions?', '4')],
        author: 'bob',
      });
      // carol, also from v1, edits c2 and adds c3: merged with bob's change
      const merged = await cs.save(KEY, {
        base: 1,
        items: [fact('c1', 'Gender?', 'F'), fact('c2', 'Admissions?', 'four'), fact('c3', 'Service?', 'MED')],
        author: 'carol',
      });
      assert.equal(merged.version.version, 3);
      assert.deepEqual(
        merged.version.items.map((i) => [i.id, i.answer]),
        [
          ['c1', 'Female'],
          ['c2', 'four'],
          ['c3', 'MED'],
        ],
      );
      // dave, still on v1, changes c1 too: conflict naming bob's version of c1
      await assert.rejects(
        cs.save(KEY, {
          base: 1,
          items: [fact('c1', 'Gender?', 'female (F)'), fact('c2', 'Admissions?', '4')],
          author: 'dave',
        }),
        (e: unknown) => {
          assert.ok(e instanceof ChecklistConflictError);
          assert.match(e.message, /carol saved version 3 meanwhile and changed c1/);
          assert.deepEqual(
            e.theirs.map((t) => [t.id, t.item?.answer, t.item?.author]),
            [['c1', 'Female', 'bob']],
          );
          return true;
        },
      );
      assert.equal((await cs.latest(KEY))!.version, 3, 'nothing saved');
      assert.equal(base.version, 1);
      await s.close();
    });

    it('refuses bad items by name and saves nothing', async () => {
      const s = await e.open(await e.fresh());
      const cs = checklistStoreOf(s);
      await assert.rejects(
        cs.save(KEY, { base: null, items: [fact('c1', 'Gender?', 'F'), fact('c1', 'Again?', 'x')], author: 'a' }),
        /item 2 \(c1\): the id c1 is used twice/,
      );
      await assert.rejects(
        cs.save(KEY, { base: null, items: [fact('c1', 'Gender?', '')], author: 'a' }),
        /item 1 \(c1\): needs the expected answer/,
      );
      await assert.rejects(
        cs.save(KEY, {
          base: null,
          items: [{ ...fact('c1', 'Clarity', ''), kind: 'criterion', rubric: ['a', 'b'] }],
          author: 'a',
        }),
        /a rubric has five anchors/,
      );
      await assert.rejects(
        cs.save(KEY, { base: 4, items: [fact('c1', 'Gender?', 'F')], author: 'a' }),
        LoupeInputError,
      );
      assert.equal(await cs.latest(KEY), undefined);
      await s.close();
    });
  }),
);

describe('annotations/checklists: rubrics', () => {
  it('a criterion rubric reaches the AnalystBench scorer as its five anchors', () => {
    const [item] = activeChecklistItems([
      {
        id: 'k1',
        kind: 'criterion',
        question: 'Explains the main driver',
        answer: '',
        rubric: ['absent', 'vague', 'named', 'named with numbers', 'named, quantified and sourced'],
        author: 'a',
        updatedAt: 't',
      },
    ]);
    const [crit] = criteriaFromChecklist([item!]);
    assert.equal(crit!.criterion, 'Explains the main driver');
    assert.deepEqual(crit!.rubric, ['absent', 'vague', 'named', 'named with numbers', 'named, quantified and sourced']);
  });
});

describe('annotations/checklists: native export read back by the suite loader', () => {
  it('DDR: qa.json for the entity; AnalystBench: the checklist list', async () => {
    const ddr = getBenchmark('ddr');
    const block = { id: 'patient_10000032', ddr: { entityId: '10000032', checklistCount: 0 } } as unknown as Block;
    const items = activeChecklistItems([
      fact('c1', 'What is the gender?', 'F', { sourceText: 'hosp_patients.gender' }),
      { ...fact('c2', 'Old', 'x'), retired: true },
      fact('c3', 'How many admissions?', '4'),
    ]);
    const file = ddr.checklist!.exportNative(block, items, join(tmp, 'qa.json'));
    const { readChecklists } = await import('../../../../src/core/benchmarks/ddr/load.ts');
    const back = readChecklists(file).byEntity.get('10000032')!;
    const strip = (l: readonly { question: string; answer: string; sourceText?: string }[]) =>
      l.map((i) => ({ question: i.question, answer: i.answer, sourceText: i.sourceText }));
    assert.deepEqual(strip(back), strip(items));
    assert.deepEqual(ddr.checklist!.loadWith!(file), { checklist: file });

    // an item naming a table or column the block's database lacks is refused by name
    const withDb = {
      ...block,
      visible: {
        database: { tables: [{ name: 'hosp_patients', columns: [{ name: 'gender' }, { name: 'subject_id' }] }] },
      },
    } as unknown as Block;
    assert.deepEqual(
      ddr.checklist!.checkItems(withDb, [
        { id: 'c1', question: 'q', sourceText: 'hosp_patients.gender' },
        { id: 'c2', question: 'q', sourceText: 'hosp_patients.sex' },
        { id: 'c3', question: 'q', sourceText: 'icu_stays.los' },
        { id: 'c4', question: 'q', sourceText: 'from the discharge note' },
      ]),
      [
        'item 2 (c2): table hosp_patients has no column sex (columns: gender, subject_id)',
        'item 3 (c3): the database has no table icu_stays (tables: hosp_patients)',
      ],
    );
    const ab = getBenchmark('analystbench');
    const crit = activeChecklistItems([
      {
        id: 'k1',
        kind: 'criterion',
        question: 'States the trend',
        answer: '',
        rubric: ['1', '2', '3', '4', '5'],
        author: 'a',
        updatedAt: 't',
      },
    ]);
    const f2 = ab.checklist!.exportNative(block, crit, join(tmp, 'ab', 'checklist.json'));
    assert.deepEqual(parseChecklist(f2), crit);
  });
});

describe('annotations/checklists: scoring against versions (MIMIC-IV demo patient, scripted judge)', () => {
  it('scores record the checklist used; a revised item changes the score; an unknown version is refused', async () => {
    const suite = await loadSuite('ddr', sharedData('mimic-iv-demo'), {
      entities: 'patients.subject_id',
      database: join(tmp, 'demo.sqlite'),
      metadataDir: sharedData('ddr', 'mimic'),
      tableFilter: (t) => t === 'hosp_patients' || t === 'hosp_admissions',
    });
    const block = suite.blocks.find((b) => b.id === 'patient_10000032')!;
    assert.equal(block.hidden.checklist!.length, 0, 'the published MIMIC checklists do not cover the demo');
    const s = openStore(join(tmp, 'runs.sqlite'));
    await s.createRun({
      id: 'd1',
      suite: 'ddr',
      blockId: block.id,
      agent: 'llm',
      model: 'm',
      params: {
        suiteRoot: suite.root,
        loadOptions: {
          entities: 'patients.subject_id',
          database: join(tmp, 'demo.sqlite'),
          metadataDir: sharedData('ddr', 'mimic'),
        },
      },
      promptHash: 'h',
      toolSet: 'ddr',
      dataChecksums: {},
      loupeVersion: 't',
      sandbox: 'off',
      workspace: tmp,
    });
    await s.applyEffects('d1', 0, {
      extra: { ddr: { options: { finishRule: 'paper', emptyInsights: 'zero' }, queries: [] } },
    });
    await s.addEvent(
      'd1',
      'ddr-result',
      JSON.stringify({
        options: {},
        finalReport: 'FINISH: female, 52 years old, 4 admissions.',
        finalReportSource: 'finish',
        insights: [
          { stepIndex: 0, tool: 'execute_query', insight: 'The patient is F, anchor age 52.' },
          { stepIndex: 1, tool: 'execute_query', insight: 'She had 4 admissions.' },
        ],
        touched: { tables: [], columns: [], queries: 2 },
      }),
    );
    const judge = new CallbackJudge('scripted', ((task: string, i: JudgeInput<'checklist-support'>) => {
      if (task === 'hallucination') return { hallucinated: false, reason: '' };
      const text = (i.insights ?? [i.report ?? '']).join(' ').toLowerCase();
      return {
        label: text.includes(i.answer.toLowerCase()) ? 'CORRECT_INFO' : 'INSUFFICIENT_INFO',
        supporting: [],
        contradicting: [],
        evidence: '',
        reasoning: '',
      };
    }) as never);
    const suites = new Map<string, Promise<Suite>>([[`ddr\u0000${suite.root}`, Promise.resolve(suite)]]);
    const native = await scoreStoredRun(s, 'd1', { judge, suites });
    assert.deepEqual(native.checklist, { source: 'native', hash: checklistHash([]), items: 0 });

    const cs = checklistStoreOf(s);
    const key = { suite: 'ddr', suiteId: suite.id, blockId: block.id };
    await cs.save(key, {
      base: null,
      author: 'alice',
      items: [
        fact('c1', 'What is the gender?', 'F'),
        fact('c2', 'What is the anchor age?', '52'),
        fact('c3', 'How many hospital admissions?', '7', {
          evidence: {
            sql: 'SELECT COUNT(*) FROM hosp_admissions WHERE subject_id = 10000032',
            result: { columns: ['COUNT(*)'], rows: [[4]], rowCount: 1, truncated: false },
          },
        }),
      ],
    });
    const v1 = await scoreStoredRun(s, 'd1', { judge, suites });
    assert.equal(v1.checklist?.source, 'authored');
    assert.equal(v1.checklist?.version, 1);
    assert.equal(v1.summary.messageWiseAccuracy, 2 / 3, 'gender and age are in the insights; 7 admissions is not');
    await cs.save(key, {
      base: 1,
      author: 'bob',
      note: 'the demo has 4 admissions',
      items: [
        fact('c1', 'What is the gender?', 'F'),
        fact('c2', 'What is the anchor age?', '52'),
        fact('c3', 'How many hospital admissions?', '4'),
      ],
    });
    const v2 = await scoreStoredRun(s, 'd1', { judge, suites });
    assert.equal(v2.checklist?.version, 2);
    assert.equal(v2.summary.messageWiseAccuracy, 1);
    const again1 = await scoreStoredRun(s, 'd1', { judge, suites, checklist: 1 });
    assert.equal(again1.summary.messageWiseAccuracy, 2 / 3, 're-scoring against version 1 still gives its score');
    assert.equal((await scoreStoredRun(s, 'd1', { judge, suites, checklist: 'native' })).checklist?.source, 'native');
    await assert.rejects(
      scoreStoredRun(s, 'd1', { judge, suites, checklist: 7 }),
      /checklist version 7: block patient_10000032 has versions 1, 2/,
    );
    await s.close();
  });
});

describe('cli checklist', () => {
  it('saves, lists, diffs and exports a demo patient checklist; a conflicting save is refused with the other change', async () => {
    const io = () => {
      const out: string[] = [];
      const err: string[] = [];
      return {
        out,
        err,
        io: {
          out: (x: string) => out.push(x),
          err: (x: string) => err.push(x),
          env: { ...process.env, LOUPE_ANNOTATOR: 'alice' },
          cwd: tmp,
        },
      };
    };
    const common = [
      '--suite',
      'ddr',
      '--root',
      sharedData('mimic-iv-demo'),
      '--entities',
      'patients.subject_id',
      '--database',
      join(tmp, 'cli-demo.sqlite'),
      '--metadata',
      sharedData('ddr', 'mimic'),
      '--block',
      'patient_10000032',
      '--store',
      join(tmp, 'cli.sqlite'),
    ];
    const empty = io();
    assert.equal(await main(['checklist', 'show', ...common], empty.io), 0, empty.err.join(''));
    assert.match(empty.out.join(''), /no checklist: runs of this block cannot be scored/);
    writeFileSync(
      join(tmp, 'items.json'),
      JSON.stringify([
        { id: 'c1', question: 'What is the gender?', answer: 'F' },
        { id: 'c2', question: 'How many admissions?', answer: '4' },
      ]),
    );
    const save = io();
    assert.equal(
      await main(['checklist', 'save', ...common, '--file', 'items.json', '--note', 'first'], save.io),
      0,
      save.err.join(''),
    );
    assert.match(save.out.join(''), /saved patient_10000032 checklist version 1 \(2 items/);
    writeFileSync(
      join(tmp, 'items2.json'),
      JSON.stringify([
        { id: 'c1', question: 'What is the gender?', answer: 'Female' },
        { id: 'c2', question: 'How many admissions?', answer: '4', retired: true },
      ]),
    );
    assert.equal(
      await main(['checklist', 'save', ...common, '--file', 'items2.json', '--base', '1', '--author', 'bob'], io().io),
      0,
    );
    const conflict = io();
    writeFileSync(
      join(tmp, 'items3.json'),
      JSON.stringify([
        { id: 'c1', question: 'What is the gender?', answer: 'F (female)' },
        { id: 'c2', question: 'How many admissions?', answer: '4' },
      ]),
    );
    assert.equal(await main(['checklist', 'save', ...common, '--file', 'items3.json', '--base', '1'], conflict.io), 1);
    assert.match(
      conflict.err.join(''),
      /bob saved version 2 meanwhile and changed c1[\s\S]*their c1: What is the gender\? = Female \(by bob\)/,
    );
    const versions = io();
    assert.equal(await main(['checklist', 'versions', ...common], versions.io), 0);
    assert.match(
      versions.out.join(''),
      /v1 .* alice {2}2 items {2}\+2 added .*"first"\nv2 .* bob {2}1 item {2}1 changed, 1 retired/,
    );
    const diff = io();
    assert.equal(await main(['checklist', 'diff', ...common, '--from', '1', '--to', '2'], diff.io), 0);
    assert.match(
      diff.out.join(''),
      /~ c1: What is the gender\? = F\n {2}→ What is the gender\? = Female\n- c2: How many admissions\?/,
    );
    const exp = io();
    assert.equal(await main(['checklist', 'export', ...common, '--version', '2', '--out', 'qa-v2.json'], exp.io), 0);
    const suite = await loadSuite('ddr', sharedData('mimic-iv-demo'), {
      entities: 'patients.subject_id',
      database: join(tmp, 'cli-demo.sqlite'),
      metadataDir: sharedData('ddr', 'mimic'),
      checklist: join(tmp, 'qa-v2.json'),
    });
    assert.deepEqual(
      suite.blocks.find((b) => b.id === 'patient_10000032')!.hidden.checklist!.map((c) => [c.question, c.answer]),
      [['What is the gender?', 'Female']],
    );
    const blocks = io();
    assert.equal(
      await main(
        ['blocks', ...common.filter((_, k) => common[k] !== '--block' && common[k - 1] !== '--block')],
        blocks.io,
      ),
      0,
      blocks.err.join(''),
    );
    assert.match(blocks.out.join(''), /patient_10000032 +1 item, 1 checklist item \(authored version 2\)/);
    assert.match(
      blocks.out.join(''),
      /patient_10001217 +1 item, no checklist \(runs of this block cannot be scored until one is written/,
    );
    const bad = io();
    assert.notEqual(await main(['checklist', 'show', ...common, '--version', '9'], bad.io), 0);
    assert.match(bad.err.join(''), /checklist version 9: block patient_10000032 has versions 1, 2/);
  });
});
