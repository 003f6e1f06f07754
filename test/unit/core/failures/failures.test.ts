import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { AnnotationStore } from '../../../../src/core/annotations/index.ts';
import { krippendorffAlpha } from '../../../../src/core/eval/agreement.ts';
import {
  failureClassRows,
  failureFigures,
  failureModeRows,
  failureTagAgreement,
  hallucinationRows,
  jsonPathLine,
  loadWorkspaceTaxonomies,
  parseTaxonomyText,
  recordFailureCase,
  recordHallucinationCheck,
  tagSpan,
  tagSteps,
  unitAgreement,
  validateTaxonomy,
  type Taxonomy,
  type UnitDocument,
} from '../../../../src/core/failures/index.ts';
import { builtinTaxonomies, findTaxonomy, taxonomyCatalog } from '../../../../src/app/failures/registry.ts';
import {
  interleave,
  openFailureQueue,
  openHallucinationQueue,
  stratifiedSample,
} from '../../../../src/app/failures/sampling.ts';
import type { RunStore } from '../../../../src/core/store/run-store.ts';
import {
  FIXTURE_REPORT,
  openFailureFixture,
  closeFailureFixture,
  type FailureFixture,
} from '../../../helpers/failure-fixtures.ts';

let dir = '';
let rs: RunStore;
let ann: AnnotationStore;
let ids: string[] = [];
const DDR = () => findTaxonomy(builtinTaxonomies(), 'ddr');
const AB = () => findTaxonomy(builtinTaxonomies(), 'analystbench-report');

let fx: FailureFixture | undefined;
before(async () => {
  fx = await openFailureFixture('loupe-failures-');
  ({ dir, rs, ann, ids } = fx);
});
after(() => closeFailureFixture(fx));

describe('failure taxonomies', () => {
  it("the benchmarks declare theirs: DDR 8 classes in 3 groups (§6), AnalystBench 9 modes (Table 4), LongDA and BLADE marked as Loupe's own", () => {
    const all = builtinTaxonomies();
    const ddr = all.find((t) => t.id === 'ddr')!;
    assert.equal(ddr.classes.length, 8);
    assert.deepEqual(
      [...new Set(ddr.classes.map((c) => c.group))],
      ['Failure in exploration', 'Poor data-to-insight ability', 'Lost in the context'],
    );
    assert.match(ddr.source, /§6/);
    assert.equal(all.find((t) => t.id === 'analystbench-report')!.classes.length, 9);
    const longda = all.find((t) => t.id === 'longda')!;
    assert.equal(longda.origin, 'loupe');
    assert.deepEqual(
      longda.classes.map((c) => c.id),
      [
        'wrong-variable',
        'wrong-weight-or-design',
        'wrong-universe',
        'wrong-year-or-file',
        'unit-or-rounding',
        'arithmetic',
        'gave-up',
      ],
    );
    const blade = all.find((t) => t.id === 'blade')!;
    assert.equal(blade.origin, 'loupe');
    assert.deepEqual(
      blade.benchmarks.sort(),
      ['blade', 'blade-mcq'].filter((k) => blade.benchmarks.includes(k)).sort(),
    );
    // every shipped taxonomy passes the same validation as a user's file
    for (const t of all) validateTaxonomy(t, `taxonomy ${t.id}`, t.origin);
  });

  it('loads workspace taxonomies; a file that does not parse or fit is reported with file and line, the others still load', () => {
    const ws = join(dir, 'ws');
    const tdir = join(ws, '.loupe', 'taxonomies');
    mkdirSync(tdir, { recursive: true });
    writeFileSync(
      join(tdir, 'a-good.json'),
      JSON.stringify(
        {
          id: 'team',
          title: 'Team taxonomy',
          source: 'our lab guide §2',
          classes: [{ id: 'wrong-join', label: 'Wrong join', definition: 'Joined on the wrong key.' }],
        },
        null,
        2,
      ),
    );
    writeFileSync(
      join(tdir, 'b-syntax.json'),
      '{\n  "id": "broken",\n  "title": "x",\n  "classes": [\n    { "id": "a", }\n  ]\n}\n',
    );
    writeFileSync(
      join(tdir, 'c-schema.json'),
      '{\n  "id": "nodef",\n  "title": "No definition",\n  "classes": [\n    { "id": "a", "label": "A", "definition": "ok" },\n    { "id": "b", "label": "B" }\n  ]\n}\n',
    );
    writeFileSync(
      join(tdir, 'd-dup.json'),
      '{\n  "id": "dup",\n  "title": "Dup",\n  "classes": [\n    { "id": "a", "label": "A", "definition": "x" },\n    { "id": "a", "label": "A2", "definition": "y" }\n  ]\n}\n',
    );
    writeFileSync(
      join(tdir, 'e-clash.json'),
      JSON.stringify({ id: 'ddr', title: 'Mine', classes: [{ id: 'x', label: 'X', definition: 'x' }] }),
    );
    writeFileSync(join(tdir, 'notes.txt'), 'not a taxonomy');
    const got = loadWorkspaceTaxonomies(ws);
    assert.deepEqual(
      got.taxonomies.map((t) => t.id),
      ['team', 'ddr'],
    );
    assert.equal(got.taxonomies[0]!.origin, 'workspace');
    const err = (f: string) => got.errors.find((e) => e.file.endsWith(f))?.message ?? '';
    assert.match(err('b-syntax.json'), /b-syntax\.json:5: is not valid JSON/);
    assert.match(
      err('c-schema.json'),
      /c-schema\.json:6: is not a failure taxonomy: \$\.classes\[1\]\.definition: is required/,
    );
    assert.match(err('d-dup.json'), /d-dup\.json:6: class 2: id 'a' is used twice/);
    const cat = taxonomyCatalog(ws);
    assert.ok(cat.taxonomies.some((t) => t.id === 'team'));
    assert.equal(
      cat.taxonomies.filter((t) => t.id === 'ddr').length,
      1,
      'the workspace cannot replace a benchmark taxonomy',
    );
    assert.ok(cat.errors.some((e) => /e-clash\.json: taxonomy id 'ddr' is a benchmark's taxonomy/.test(e.message)));
    assert.throws(() => findTaxonomy(cat, 'nope'), /taxonomy nope: is not known \(known: .*team/);
  });

  it('finds the line of a JSON path', () => {
    const text = '{\n "a": 1,\n "classes": [\n  {"id": "x"},\n  {\n   "id": "y",\n   "label": "Y"\n  }\n ]\n}';
    assert.equal(jsonPathLine(text, '$.classes[1].label'), 7);
    assert.equal(jsonPathLine(text, '$.classes[1]'), 5);
    assert.equal(jsonPathLine(text, '$.a'), 2);
    assert.equal(jsonPathLine(text, '$.classes[1].missing'), undefined);
    assert.throws(() => parseTaxonomyText('', 'empty.json'), /empty\.json:1: is not valid JSON/);
  });
});

describe('failure tags', () => {
  it('tags a step range and a report span; refuses a step the run does not have, a class not in the taxonomy, a deleted run', async () => {
    const run = ids[0]!;
    const t = await tagSteps(ann, rs, {
      runId: run,
      from: 1,
      to: 2,
      taxonomy: DDR(),
      classes: ['over-reasoning', 'insufficient-depth'],
      severity: 'major',
      note: 'stops after one query',
      annotator: 'ann-a',
    });
    assert.deepEqual(
      (t.annotation.verdict as { classes: string[] }).classes,
      ['insufficient-depth', 'over-reasoning'],
      'in taxonomy order',
    );
    assert.equal(t.item.subject.kind, 'step');
    assert.equal(t.annotation.evidence.length, 2);
    await assert.rejects(
      tagSteps(ann, rs, {
        runId: run,
        from: 4,
        to: 9,
        taxonomy: DDR(),
        classes: ['over-reasoning'],
        severity: 'minor',
        annotator: 'ann-a',
      }),
      /steps 5–10 of run .*: step 10 does not exist \(the run has 6 steps\); nothing was tagged/,
    );
    await assert.rejects(
      tagSteps(ann, rs, {
        runId: run,
        from: 0,
        to: 0,
        taxonomy: DDR(),
        classes: ['made-up'],
        severity: 'minor',
        annotator: 'ann-a',
      }),
      /'made-up' is not a class of taxonomy ddr \(insufficient-breadth, /,
    );
    await assert.rejects(
      tagSteps(ann, rs, {
        runId: run,
        from: 0,
        to: 0,
        taxonomy: DDR(),
        classes: [],
        severity: 'minor',
        annotator: 'ann-a',
      }),
      /choose at least one class/,
    );
    await assert.rejects(
      tagSteps(ann, rs, {
        runId: 'gone',
        from: 0,
        to: 0,
        taxonomy: DDR(),
        classes: ['over-reasoning'],
        severity: 'minor',
        annotator: 'ann-a',
      }),
      /run gone: is not in the store/,
    );
    // tagging the same range again edits the tag (supersedes), it does not add a second verdict
    const again = await tagSteps(ann, rs, {
      runId: run,
      from: 1,
      to: 2,
      taxonomy: DDR(),
      classes: ['insufficient-depth'],
      severity: 'minor',
      annotator: 'ann-a',
    });
    assert.equal(again.item.id, t.item.id);
    assert.equal(again.annotation.supersedes, t.annotation.id);
    const start = FIXTURE_REPORT.indexOf('The company will double');
    const s = await tagSpan(ann, rs, {
      runId: run,
      artefact: 'report',
      text: FIXTURE_REPORT,
      start,
      end: start + 40,
      taxonomy: DDR(),
      classes: ['over-reasoning'],
      severity: 'major',
      annotator: 'ann-a',
    });
    assert.equal(s.item.subject.kind === 'span' && s.item.subject.quote, FIXTURE_REPORT.slice(start, start + 40));
    assert.deepEqual((s.item.input as { sentences: unknown }).sentences, { first: 2, last: 2, count: 4 });
    await assert.rejects(
      tagSpan(ann, rs, {
        runId: run,
        artefact: 'report',
        text: FIXTURE_REPORT,
        start: 10,
        end: 9999,
        taxonomy: DDR(),
        classes: ['over-reasoning'],
        severity: 'major',
        annotator: 'ann-a',
      }),
      /a span needs 0 ≤ start < end ≤ \d+/,
    );
  });
});

describe('seeded stratified sampling', () => {
  it("draws N per stratum, reproducibly, and a stratum's sample does not depend on the other strata", () => {
    const xs = Array.from({ length: 40 }, (_, i) => ({
      s: i % 4 === 0 ? 'b' : 'a',
      k: `k${String(i).padStart(2, '0')}`,
    }));
    const one = stratifiedSample(
      xs,
      (x) => x.s,
      (x) => x.k,
      5,
      7,
    );
    assert.deepEqual(
      one.map((s) => [s.stratum, s.population, s.sampled.length]),
      [
        ['a', 30, 5],
        ['b', 10, 5],
      ],
    );
    assert.deepEqual(
      stratifiedSample(
        [...xs].reverse(),
        (x) => x.s,
        (x) => x.k,
        5,
        7,
      ),
      one,
      'listing order does not matter',
    );
    assert.notDeepEqual(
      stratifiedSample(
        xs,
        (x) => x.s,
        (x) => x.k,
        5,
        8,
      )[0]!.sampled,
      one[0]!.sampled,
      'another seed, another sample',
    );
    const onlyA = stratifiedSample(
      xs.filter((x) => x.s === 'a'),
      (x) => x.s,
      (x) => x.k,
      5,
      7,
    );
    assert.deepEqual(onlyA[0]!.sampled, one[0]!.sampled);
    assert.deepEqual(
      stratifiedSample(
        xs,
        (x) => x.s,
        (x) => x.k,
        50,
        1,
      ).map((s) => s.sampled.length),
      [30, 10],
      'a small stratum is taken whole',
    );
    assert.deepEqual(
      interleave(one)
        .slice(0, 4)
        .map((x) => x.s),
      ['a', 'b', 'a', 'b'],
    );
    assert.throws(
      () =>
        stratifiedSample(
          xs,
          (x) => x.s,
          (x) => x.k,
          0,
          1,
        ),
      /items per stratum: must be a whole number ≥ 1/,
    );
  });

  it('the failure queue samples items judged incorrect per model × scenario and serves each with its trajectory', async () => {
    const q = await openFailureQueue(ann, rs, { suite: 'ddr', perStratum: 3, seed: 11 });
    // 4 strata (2 models × 2 scenarios); each has 3 entities whose runs fail 2–3 of 4 items
    assert.deepEqual(
      q.strata.map((s) => s.stratum),
      ['model-a · 10k', 'model-a · mimic', 'model-b · 10k', 'model-b · mimic'],
    );
    assert.ok(
      q.strata.every((s) => s.sampled === 3 && s.population >= 6),
      JSON.stringify(q.strata),
    );
    assert.equal(q.items.length, 12);
    for (const i of q.items) {
      const input = i.input as { runId: string; ref: string; detail: string; model: string; scenario: string };
      assert.doesNotMatch(input.detail, /(^|\s)CORRECT_INFO/, 'no context judged the item correct');
      assert.equal(i.subject.kind === 'step' && i.subject.to, 5, 'linked to the whole trajectory');
    }
    const again = await openFailureQueue(ann, rs, { suite: 'ddr', perStratum: 3, seed: 11 });
    assert.equal(again.queue.id, q.queue.id);
    assert.deepEqual(
      again.items.map((i) => i.id),
      q.items.map((i) => i.id),
    );
    const other = await openFailureQueue(ann, rs, { suite: 'ddr', perStratum: 3, seed: 12 });
    assert.notDeepEqual(other.items.map((i) => i.id).sort(), q.items.map((i) => i.id).sort());
    const first = await ann.nextItem(q.queue.id, 'ann-a');
    assert.equal(first?.item.id, q.items[0]!.id);
    assert.match(q.queue.name, /Failure analysis \(3 per stratum, seed 11\)/);
  });

  it('the hallucination queue samples insights per model × domain', async () => {
    const q = await openHallucinationQueue(ann, rs, { perStratum: 5, seed: 3 });
    assert.equal(q.strata.length, 4);
    assert.ok(
      q.strata.every((s) => s.population === 12 && s.sampled === 5),
      JSON.stringify(q.strata),
    );
    assert.ok(q.items.every((i) => i.subject.kind === 'span' && /^insight:\d$/.test(i.subject.artefact)));
  });
});

describe('unit-based agreement', () => {
  const tax: Taxonomy = {
    id: 't',
    title: 'T',
    origin: 'workspace',
    source: 'test',
    unit: 'both',
    classes: [
      { id: 'x', label: 'X', definition: 'x' },
      { id: 'y', label: 'Y', definition: 'y' },
    ],
  };
  it('per class over units, each unit carrying the set of classes of the tags covering it (hand-computed κ and α)', () => {
    const doc: UnitDocument = {
      doc: 'run r',
      units: 4,
      readers: new Map([
        ['a', [{ from: 0, to: 1, classes: ['x'] }]],
        [
          'b',
          [
            { from: 1, to: 1, classes: ['x'] },
            { from: 3, to: 3, classes: ['y'] },
          ],
        ],
      ]),
    };
    const r = unitAgreement([doc], tax, 'step');
    const x = r.classes.find((c) => c.classId === 'x')!;
    // x: a = yes yes no no, b = no yes no no → p_o = 3/4, p_e = ½·¼ + ½·¾ = ½, κ = ½; α = 1 − 7·2 / (3·5·2) = 8/15
    assert.equal(x.percentAgreement, 0.75);
    assert.equal(x.cohensKappa, 0.5);
    assert.ok(Math.abs(x.alpha! - 8 / 15) < 1e-12);
    assert.deepEqual(x.positives, { a: 2, b: 1 });
    const y = r.classes.find((c) => c.classId === 'y')!;
    assert.equal(y.percentAgreement, 0.75);
    assert.equal(y.cohensKappa, 0);
    assert.equal(y.alpha, 0);
    // an annotator who did not read a document gives no ratings there (missing, not "no class")
    const unread: UnitDocument = {
      doc: 'run s',
      units: 3,
      readers: new Map([['a', [{ from: 0, to: 2, classes: ['x'] }]]]),
    };
    const r2 = unitAgreement([doc, unread], tax, 'step');
    assert.equal(r2.units, 7);
    assert.equal(r2.classes[0]!.pairableUnits, 4);
    assert.equal(r2.classes[0]!.alpha, x.alpha);
    assert.equal(
      krippendorffAlpha([
        ['yes', 'yes', 'no', 'no'],
        ['no', 'yes', 'no', 'no'],
      ]).alpha,
      x.alpha,
    );
  });

  it('from the store: steps of trajectories and sentences of reports', async () => {
    const run = ids[1]!;
    await tagSteps(ann, rs, {
      runId: run,
      from: 0,
      to: 1,
      taxonomy: DDR(),
      classes: ['insufficient-breadth'],
      severity: 'major',
      annotator: 'ann-a',
    });
    await tagSteps(ann, rs, {
      runId: run,
      from: 1,
      to: 1,
      taxonomy: DDR(),
      classes: ['insufficient-breadth'],
      severity: 'major',
      annotator: 'ann-b',
    });
    await tagSteps(ann, rs, {
      runId: run,
      from: 3,
      to: 3,
      taxonomy: DDR(),
      classes: ['over-reasoning'],
      severity: 'minor',
      annotator: 'ann-b',
    });
    const { steps, sentences } = await failureTagAgreement(ann, rs, DDR(), { runIds: [run] });
    assert.equal(steps.units, 6);
    assert.deepEqual(steps.annotators, ['ann-a', 'ann-b']);
    const b = steps.classes.find((c) => c.classId === 'insufficient-breadth')!;
    // a = yes yes no no no no; b = no yes no no no no: p_o = 5/6, p_e = (2/6)(1/6) + (4/6)(5/6) = 22/36, κ = (30/36 − 22/36) / (14/36) = 4/7
    assert.ok(Math.abs(b.cohensKappa! - 4 / 7) < 1e-12, String(b.cohensKappa));
    assert.equal(b.percentAgreement, 5 / 6);
    assert.equal(sentences.documents, 0);
    const s0 = FIXTURE_REPORT.indexOf('Revenue');
    await tagSpan(ann, rs, {
      runId: run,
      artefact: 'report',
      text: FIXTURE_REPORT,
      start: s0,
      end: s0 + 10,
      taxonomy: AB(),
      classes: ['missing-quantitative-facts'],
      severity: 'minor',
      annotator: 'ann-a',
    });
    const s2 = FIXTURE_REPORT.indexOf('The company');
    await tagSpan(ann, rs, {
      runId: run,
      artefact: 'report',
      text: FIXTURE_REPORT,
      start: s2,
      end: s2 + 20,
      taxonomy: AB(),
      classes: ['scope-and-nuance-errors'],
      severity: 'major',
      annotator: 'ann-b',
    });
    const ab = await failureTagAgreement(ann, rs, AB(), { runIds: [run] });
    assert.equal(ab.sentences.units, 4);
    assert.equal(ab.sentences.classes.find((c) => c.classId === 'missing-quantitative-facts')!.percentAgreement, 3 / 4);
  });
});

describe('figure tables', () => {
  it('Fig. 8 rows: class counts and shares per model × scenario; cases the expert found not failing are left out', () => {
    const rows = failureClassRows(
      [
        { model: 'm1', scenario: 's', taxonomy: 'ddr', classes: ['insufficient-breadth', 'over-reasoning'] },
        { model: 'm1', scenario: 's', taxonomy: 'ddr', classes: ['insufficient-breadth'] },
        { model: 'm1', scenario: 's', taxonomy: 'ddr', classes: [], judgeWrong: true },
        { model: 'm2', scenario: 's', taxonomy: 'ddr', classes: ['fail-in-summarisation'] },
      ],
      [DDR()],
    );
    assert.equal(rows.length, 16, 'every class of the taxonomy per model × scenario');
    const r = (m: string, c: string) => rows.find((x) => x.model === m && x.classId === c)!;
    assert.deepEqual(
      [
        r('m1', 'insufficient-breadth').count,
        r('m1', 'insufficient-breadth').cases,
        r('m1', 'insufficient-breadth').share,
      ],
      [2, 2, 1],
    );
    assert.equal(r('m1', 'over-reasoning').share, 0.5);
    assert.equal(r('m1', 'insufficient-breadth').group, 'Failure in exploration');
    assert.equal(r('m2', 'fail-in-summarisation').count, 1);
  });

  it('Table 6 rows: rate per model × domain and the Avg as the paper takes it (mean of domain rates)', () => {
    const checks = [
      ...Array.from({ length: 4 }, (_, i) => ({ model: 'm', domain: '10-K', hallucinated: i === 0 })),
      ...Array.from({ length: 2 }, () => ({ model: 'm', domain: 'MIMIC', hallucinated: false })),
    ];
    const rows = hallucinationRows(checks);
    assert.deepEqual(
      rows.map((r) => [r.domain, r.checked, r.hallucinated, r.rate]),
      [
        ['10-K', 4, 1, 0.25],
        ['MIMIC', 2, 0, 0],
        ['Avg', 6, 1, 0.125],
      ],
    );
  });

  it('Table 4 rows: count, share, definition and examples per mode', () => {
    const rows = failureModeRows(
      [
        {
          taxonomy: 'analystbench-report',
          classes: ['undefined-terminology'],
          runId: 'r1',
          where: 'report',
          text: 'EBITDA rose',
          note: 'EBITDA never defined',
        },
        {
          taxonomy: 'analystbench-report',
          classes: ['undefined-terminology', 'low-actionability'],
          runId: 'r2',
          where: 'report',
          text: 'ARPU fell',
          note: null,
        },
        { taxonomy: 'ddr', classes: ['over-reasoning'], runId: 'r3', where: 'x', text: 'y', note: null },
      ],
      AB(),
      1,
    );
    assert.equal(rows.length, 9);
    const u = rows.find((r) => r.classId === 'undefined-terminology')!;
    assert.deepEqual([u.count, u.share, u.examples.length, u.examples[0]!.note], [2, 1, 1, 'EBITDA never defined']);
    assert.match(u.definition, /without definition/);
    assert.equal(rows.find((r) => r.classId === 'low-actionability')!.count, 1);
  });

  it('the three tables from the store after experts worked both queues', async () => {
    const fq = await openFailureQueue(ann, rs, { suite: 'ddr', perStratum: 2, seed: 5 });
    for (const [n, item] of fq.items.entries()) {
      await recordFailureCase(ann, DDR(), {
        itemId: item.id,
        annotator: 'ann-a',
        classes: n % 2 ? ['insufficient-breadth'] : ['over-reasoning', 'superficial-analysis'],
        severity: 'major',
        queueId: fq.queue.id,
      });
    }
    await assert.rejects(
      recordFailureCase(ann, DDR(), { itemId: fq.items[0]!.id, annotator: 'ann-a', classes: ['nope'] }),
      /'nope' is not a class of taxonomy ddr/,
    );
    const hq = await openHallucinationQueue(ann, rs, { suite: 'ddr', perStratum: 2, seed: 5 });
    for (const [n, item] of hq.items.entries()) {
      await recordHallucinationCheck(ann, {
        itemId: item.id,
        annotator: 'ann-a',
        correct: true,
        derivable: n % 4 !== 0,
      });
    }
    const figs = await failureFigures(ann, builtinTaxonomies(), { suite: 'ddr' });
    assert.equal(figs.counts.casesResolved, fq.items.length + 0, JSON.stringify(figs.counts));
    const a10k = figs.fig8.filter((r) => r.model === 'model-a' && r.scenario === '10k');
    assert.equal(a10k[0]!.cases, 2);
    assert.equal(
      a10k.find((r) => r.classId === 'insufficient-breadth')!.count +
        a10k.find((r) => r.classId === 'over-reasoning')!.count,
      2,
    );
    assert.equal(
      figs.table6.filter((r) => r.domain !== 'Avg').reduce((s, r) => s + r.checked, 0),
      hq.items.length,
    );
    assert.equal(
      figs.table6.filter((r) => r.domain !== 'Avg').reduce((s, r) => s + r.hallucinated, 0),
      hq.items.filter((_, n) => n % 4 === 0).length,
    );
    const ddrTable = figs.table4.find((t) => t.taxonomy.id === 'ddr')!;
    assert.ok(ddrTable.rows.find((r) => r.classId === 'insufficient-breadth')!.count >= 4);
  });
});

describe('loupe report', () => {
  it('has the failure-analysis section with the Fig. 8, Table 6 and Table 4 forms (after the store tests above)', async () => {
    const { main } = await import('../../../../src/cli/main.ts');
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (s: string) => void out.push(s), err: (s: string) => void err.push(s), env: {}, cwd: dir };
    assert.equal(await main(['report', '--store', join(dir, 'runs.sqlite'), '--suite', 'ddr'], io), 0, err.join(''));
    const md = out.join('');
    assert.match(md, /## Failure analysis \(expert annotations\)/);
    assert.match(
      md,
      /\*\*Failure classes per model and scenario \(DDR-Bench Fig\. 8 form\)[^\n]*\n\n\| model \| scenario \| cases \| Insufficient breadth/,
    );
    assert.match(md, /\| model-a \| 10k \| 2 \|/);
    assert.match(md, /Hallucination rate per model and domain, % \(DDR-Bench Table 6 form/);
    assert.match(md, /\| model-a \| [\d.]+ \(\d+\/\d+\) \| [\d.]+ \(\d+\/\d+\) \| [\d.]+ \(\d+\/\d+\) \|/);
    assert.match(md, /DDR-Bench failure modes: failure modes with counts and examples \(AnalystBench Table 4 form/);
    assert.match(
      md,
      /```vega-lite\n\{"\$schema":"https:\/\/vega\.github\.io\/schema\/vega-lite\/v6\.json","title":"Failure classes per model and scenario/,
    );
  });
});

describe('loupe failures', () => {
  it('taxonomies, queue, tag and agreement from the command line; bad input named', async () => {
    const { main } = await import('../../../../src/cli/main.ts');
    const run = async (args: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const rc = await main(['failures', ...args], {
        out: (s: string) => void out.push(s),
        err: (s: string) => void err.push(s),
        env: { LOUPE_ANNOTATOR: 'cli-user' },
        cwd: dir,
      });
      return { rc, out: out.join(''), err: err.join('') };
    };
    const store = join(dir, 'runs.sqlite');
    const t = await run(['taxonomies', '--workspace', join(dir, 'nowhere')]);
    assert.equal(t.rc, 0, t.err);
    assert.match(t.out, /^longda {2}LongDA answer failures \(Loupe's own\) {2}\[Loupe's own;/m);
    const bad = await run(['taxonomies', '--workspace', join(dir, 'ws')]);
    assert.equal(bad.rc, 1);
    assert.match(bad.err, /b-syntax\.json:5: is not valid JSON/);
    const q = await run(['queue', '--kind', 'failures', '--store', store, '--per', '1', '--seed', '9', '--json']);
    assert.equal(q.rc, 0, q.err);
    assert.equal((JSON.parse(q.out) as { items: string[] }).items.length, 4);
    const tag = await run([
      'tag',
      '--store',
      store,
      '--run',
      ids[2]!,
      '--steps',
      '2-4',
      '--taxonomy',
      'ddr',
      '--classes',
      'insufficient-depth',
      '--workspace',
      join(dir, 'nowhere'),
    ]);
    assert.equal(tag.rc, 0, tag.err);
    assert.match(tag.out, /tagged steps 2–4 of run/);
    const gone = await run([
      'tag',
      '--store',
      store,
      '--run',
      ids[2]!,
      '--steps',
      '7',
      '--taxonomy',
      'ddr',
      '--classes',
      'insufficient-depth',
      '--workspace',
      join(dir, 'nowhere'),
    ]);
    assert.notEqual(gone.rc, 0);
    assert.match(gone.err, /step 7 does not exist \(the run has 6 steps\)/);
    const ag = await run(['agreement', '--store', store, '--taxonomy', 'ddr', '--workspace', join(dir, 'nowhere')]);
    assert.equal(ag.rc, 0, ag.err);
    assert.match(ag.out, /Trajectories \(units = steps\): \d+ documents, \d+ units, annotators ann-a, ann-b, cli-user/);
  });
});
