import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main } from '../../../../src/cli/main.ts';
import {
  agreementReport,
  humanResolver,
  judgementItemId,
  parseJsonl,
  registerItemSchema,
  resolveItem,
  schemaVersion,
  annotationStoreOf,
  toJsonl,
  type AnnotationStore,
  type Annotation,
} from '../../../../src/core/annotations/index.ts';
import {
  CallbackJudge,
  countingJudge,
  HumanJudge,
  HybridJudge,
  sha256,
  canonicalJson,
} from '../../../../src/core/eval/judges/index.ts';
import { judgementStoreOf } from '../../../../src/core/eval/store.ts';
import { migrations } from '../../../../src/core/store/migrations.ts';
import { openStore, type RunStore } from '../../../../src/core/store/run-store.ts';
import { forEachEngine } from '../../../helpers/store-engines.ts';
import type { StepRecord } from '../../../../src/core/store/records.ts';

const close = (a: number, b: number, eps = 1e-12) => assert.ok(Math.abs(a - b) < eps, `${a} ≉ ${b}`);

const ann = (annotator: string, verdict: unknown, at: string, extra: Partial<Annotation> = {}): Annotation => ({
  id: `${annotator}-${at}`,
  itemId: 'i',
  annotator,
  role: 'annotator',
  verdict,
  evidence: [],
  note: null,
  supersedes: null,
  final: false,
  origin: 'cli',
  createdAt: at,
  dbRole: null,
  ...extra,
});
const yes = { supported: true, reason: '' };
const no = { supported: false, reason: '' };

describe('resolution rules', () => {
  const item = { id: 'i', task: 'claim-support' };
  it('single annotator, majority, tie, adjudication, and supersedes', () => {
    assert.equal(resolveItem(item, []).decidedBy, 'pending');
    assert.equal(resolveItem(item, [ann('a', yes, '1')]).decidedBy, 'single');
    const maj = resolveItem(item, [ann('a', yes, '1'), ann('b', no, '2'), ann('c', yes, '3')]);
    assert.equal(maj.decidedBy, 'majority');
    assert.deepEqual(maj.verdict, yes);
    assert.deepEqual(maj.annotators, ['a', 'c']);
    const tie = resolveItem(item, [ann('a', yes, '1'), ann('b', no, '2')]);
    assert.equal(tie.decidedBy, 'pending');
    assert.equal(tie.tie, true);
    assert.equal(resolveItem(item, [ann('a', yes, '1'), ann('b', no, '2')], 'llm+human', no).decidedBy, 'llm');
    const adj = resolveItem(item, [
      ann('a', yes, '1'),
      ann('b', no, '2'),
      ann('x', no, '3', { role: 'adjudicator', final: true }),
    ]);
    assert.equal(adj.decidedBy, 'adjudicated');
    assert.deepEqual(adj.verdict, no);
    // b edits its verdict: the superseded row no longer counts, so a and b now agree
    const edited = resolveItem(item, [
      ann('a', yes, '1'),
      ann('b', no, '2'),
      ann('b', yes, '3', { supersedes: 'b-2' }),
    ]);
    assert.equal(edited.decidedBy, 'majority');
    assert.deepEqual(edited.humanLabels, { a: 'true', b: 'true' });
  });
});

let dir = '';
const claims = ['GDP grew 3% in 2021.', 'Unemployment fell.', 'Inflation was 9%.', 'Exports doubled.'];

function step(runId: string, index: number): StepRecord {
  const now = new Date().toISOString();
  return {
    runId,
    index,
    startedAt: now,
    endedAt: now,
    latencyMs: 1,
    toolMs: 1,
    assistant: { role: 'assistant', content: `step ${index}` },
    toolCalls: [],
    extraMessages: [],
    usage: { input: 1, output: 1, cached: 0 },
    costUsd: null,
    finishReason: 'stop',
  } as StepRecord;
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-annot-'));
});
after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const claimId = (c: string) =>
  judgementItemId(
    'claim-support',
    sha256(`claim-support\u0000${canonicalJson({ claim: c, sources: 'Report of 2021.' })}`),
  );

// The store suite runs on both engines (SQLite file; a real PostgreSQL server in a temp dir).
forEachEngine((e) => {
  let rs: RunStore;
  let store: AnnotationStore;
  let location = '';
  before(async () => {
    location = await e.fresh();
    rs = await e.open(location);
    await rs.createRun({
      id: 'run-1',
      suite: 'analystbench',
      blockId: 'b1',
      agent: 'llm',
      model: 'm',
      params: {},
      promptHash: 'h',
      toolSet: 't',
      dataChecksums: { 'a.csv': 'x' },
      loupeVersion: 't',
      sandbox: 'off',
      workspace: dir,
    });
    await rs.commitStep(step('run-1', 0));
    await rs.commitStep(step('run-1', 1));
    store = annotationStoreOf(rs);
    const human = new HumanJudge(judgementStoreOf(rs), humanResolver(store));
    for (const c of claims) {
      await human.judge('claim-support', { claim: c, sources: 'Report of 2021.' }, { runId: 'run-1' });
    }
    for (const crit of ['Clarity', 'Depth']) {
      for (const r of ['resp A', 'resp B']) {
        await human.judge(
          'checklist-score',
          { instruction: 'Write', response: r, criterion: crit },
          { runId: 'run-1' },
        );
      }
    }
  });
  after(async () => {
    await rs?.close();
  });

  describe('annotation store', () => {
    it("items come from the human judge's pending judgements, with criterion, suite and suite version", async () => {
      const q = await store.openQueue({ kind: 'items' });
      const p = await store.progress(q.id);
      assert.equal(p.total, 8);
      const item = await store.getItem(claimId(claims[0]!));
      assert.ok(item);
      assert.equal(item.suite, 'analystbench');
      assert.match(item.suiteVersion, /^data:[0-9a-f]{12}$/);
      assert.equal(item.schemaVersion, schemaVersion('claim-support'));
      const scores = await store.listItems({ task: 'checklist-score', criterion: 'clar' });
      assert.equal(scores.length, 2);
    });

    it('bad verdicts, evidence that does not exist and foreign supersedes are refused; nothing is stored', async () => {
      const id = claimId(claims[0]!);
      await assert.rejects(
        store.annotate({ itemId: id, annotator: 'ann', verdict: { supported: 'yes' } }),
        /\$\.supported: must be a boolean|reason/,
      );
      await assert.rejects(
        store.annotate({
          itemId: id,
          annotator: 'ann',
          verdict: yes,
          evidence: [{ kind: 'step', runId: 'run-1', step: 9 }],
        }),
        /step 9 of run run-1 does not exist/,
      );
      await assert.rejects(store.annotate({ itemId: 'j:nope', annotator: 'ann', verdict: yes }), /no such item/);
      await assert.rejects(store.annotate({ itemId: id, annotator: '', verdict: yes }), /needs an annotator/);
      assert.equal((await store.annotations(id)).length, 0);
    });

    it('reservations: with one reviewer an item served to one annotator is not served to another until it expires', async () => {
      const q = await store.openQueue(
        { kind: 'items', task: 'claim-support' },
        { reviewers: 1, reservationMs: 60_000 },
      );
      const t0 = new Date('2030-01-01T00:00:00Z');
      const a = await store.nextItem(q.id, 'alice', { now: t0 });
      const b = await store.nextItem(q.id, 'bob', { now: t0 });
      assert.ok(a && b);
      assert.notEqual(a.item.id, b.item.id);
      const later = new Date(t0.getTime() + 61_000);
      const b2 = await store.nextItem(q.id, 'bob', { now: later, afterPos: -1 });
      assert.equal(b2?.item.id, a.item.id, "alice's reservation expired");
      await store.release(q.id, a.item.id, 'bob');
      await store.release(q.id, b.item.id, 'bob');
      await store.release(q.id, a.item.id, 'alice');
    });

    it('two reviewers per item: both annotators get the same items; progress counts per annotator; cited steps are kept', async () => {
      const q = await store.openQueue({ kind: 'items', task: 'claim-support' }, { reviewers: 2 });
      const verdicts: Record<string, Array<typeof yes>> = { alice: [yes, yes, no, yes], bob: [yes, no, no, yes] };
      for (const who of ['alice', 'bob']) {
        let after = -1;
        for (let k = 0; k < 4; k++) {
          const e = await store.nextItem(q.id, who, { afterPos: after });
          assert.ok(e, `${who} item ${k}`);
          assert.equal(e.pos, k);
          await store.annotate({
            itemId: e.item.id,
            annotator: who,
            verdict: verdicts[who]![claims.indexOf((e.item.input as { claim: string }).claim)],
            queueId: q.id,
            origin: 'panel',
            evidence: [{ kind: 'step', runId: 'run-1', step: 1 }],
          });
          after = e.pos;
        }
        assert.equal(await store.nextItem(q.id, who), undefined);
      }
      const p = await store.progress(q.id);
      assert.deepEqual(p, {
        total: 4,
        done: 4,
        byAnnotator: { alice: 4, bob: 4 },
        roles: e.name === 'postgres' ? { alice: ['loupe'], bob: ['loupe'] } : { alice: [], bob: [] },
      });
      const hist = await store.annotations(claimId(claims[0]!));
      assert.deepEqual(hist[0]!.evidence, [{ kind: 'step', runId: 'run-1', step: 1 }]);
    });

    it('the disagreement queue holds the item the humans disagree on; adjudication makes it final and empties the queue', async () => {
      const q = await store.openQueue({ kind: 'disagreement' });
      const p = await store.progress(q.id);
      assert.equal(p.total, 1);
      const e = await store.nextItem(q.id, 'carol');
      assert.equal(e?.item.id, claimId(claims[1]!));
      assert.equal((await store.resolve(e.item.id)).decidedBy, 'pending');
      await store.annotate({ itemId: e.item.id, annotator: 'carol', verdict: no, role: 'adjudicator', queueId: q.id });
      const r = await store.resolve(e.item.id);
      assert.equal(r.decidedBy, 'adjudicated');
      assert.equal((await store.progress(q.id)).done, 1);
      assert.equal(await store.nextItem(q.id, 'carol'), undefined);
    });

    it('the human judge now decides from the experts; llm+human fills the rest from the LLM; counts say who decided', async () => {
      const js = judgementStoreOf(rs);
      const counted = countingJudge(new HumanJudge(js, humanResolver(store)));
      for (const c of claims) await counted.judge.judge('claim-support', { claim: c, sources: 'Report of 2021.' });
      for (const crit of ['Clarity', 'Depth']) {
        await counted.judge.judge('checklist-score', { instruction: 'Write', response: 'resp A', criterion: crit });
      }
      assert.deepEqual(counted.counts(), { human: 4, llm: 0, exact: 0, pending: 2, unjudged: 0 });
      const j = await new HumanJudge(js, humanResolver(store)).judge('claim-support', {
        claim: claims[1]!,
        sources: 'Report of 2021.',
      });
      assert.equal(j.decidedBy, 'adjudicated');
      assert.deepEqual(j.verdict, no);
      const llm = new CallbackJudge('llm:scripted', () => ({ score: 3, reason: 'ok' }) as never, js);
      const hybrid = countingJudge(new HybridJudge(llm, js, humanResolver(store)));
      for (const c of claims) await hybrid.judge.judge('claim-support', { claim: c, sources: 'Report of 2021.' });
      for (const crit of ['Clarity', 'Depth']) {
        await hybrid.judge.judge('checklist-score', { instruction: 'Write', response: 'resp A', criterion: crit });
      }
      assert.deepEqual(hybrid.counts(), { human: 4, llm: 2, exact: 0, pending: 0, unjudged: 0 });
    });

    it('the audit queue is a seeded sample of LLM verdicts, N per task × criterion', async () => {
      const q = await store.openQueue({ kind: 'audit', perCriterion: 1, seed: 3 });
      const p = await store.progress(q.id);
      assert.equal(p.total, 2, 'one LLM-judged checklist-score item per criterion (Clarity, Depth)');
      const crits: string[] = [];
      for (let pos = 0; pos < p.total; pos++) crits.push((await store.itemAt(q.id, pos))!.item.criterion!);
      assert.deepEqual(crits.sort(), ['Clarity', 'Depth']);
      const again = await store.openQueue({ kind: 'audit', perCriterion: 1, seed: 3 });
      assert.equal(again.id, q.id, 'the same spec reopens the same queue');
      assert.equal((await store.progress(q.id)).total, 2, 'reopening adds nothing already queued');
    });

    it('agreement report: κ and α for two annotators, judge–human agreement with a confusion matrix', async () => {
      const rep = await agreementReport(store, { task: 'claim-support' }, { resamples: 200 });
      const g = rep.groups.find((x) => x.task === 'claim-support' && x.criterion === null)!;
      assert.deepEqual(g.annotators, ['alice', 'bob']);
      assert.equal(g.pairableItems, 4);
      close(g.percentAgreement!, 0.75, 1e-12);
      // alice T,T,F,T vs bob T,F,F,T: p_o = 0.75, p_e = 0.75·0.5 + 0.25·0.5 = 0.5 → κ = 0.5
      close(g.cohensKappa!.value!, 0.5, 1e-12);
      assert.ok(g.alphaNominal.value !== null && g.alphaNominal.ci);
      assert.equal(rep.totals.adjudicated, 1);
    });

    it('export → import into another store round-trips; a second import adds nothing; edits supersede', async () => {
      const first = (await store.annotations(claimId(claims[0]!))).find((a) => a.annotator === 'alice')!;
      const edit = await store.annotate({
        itemId: first.itemId,
        annotator: 'alice',
        verdict: no,
        supersedes: first.id,
        note: 'on reflection',
      });
      assert.equal(edit.supersedes, first.id);
      await assert.rejects(
        store.annotate({ itemId: first.itemId, annotator: 'bob', verdict: no, supersedes: first.id }),
        /another item or annotator/,
      );
      const recs = await store.exportRecords();
      const text = toJsonl(recs);
      const other = await e.open(await e.fresh());
      try {
        const os = annotationStoreOf(other);
        const r1 = await os.importRecords(parseJsonl(text, 'x.jsonl'), 'x.jsonl');
        const total = recs.filter((r) => r.type === 'annotation').length;
        assert.equal(r1.annotations, total);
        assert.equal(r1.items, 4, 'the four claim items carry annotations');
        const r2 = await os.importRecords(parseJsonl(text, 'x.jsonl'), 'x.jsonl');
        assert.deepEqual(r2, { items: 0, annotations: 0, unchanged: total });
        assert.deepEqual(await os.resolve(claimId(claims[1]!)), await store.resolve(claimId(claims[1]!)));
        // the run is not in this store: its items are orphaned but keep their annotations
        assert.equal(await os.runExists('run-1'), false);
        assert.equal((await os.annotations(first.itemId)).length, (await store.annotations(first.itemId)).length);
      } finally {
        await other.close();
      }
    });

    it('imports refuse other schema / suite versions and broken files, naming the line; nothing is written', async () => {
      const recs = await store.exportRecords();
      const lines = toJsonl(recs).trimEnd().split('\n');
      const itemLine = lines.findIndex((l) => l.includes('"type":"item"'));
      const bad = [...lines];
      bad[itemLine] = bad[itemLine]!.replace(/"schemaVersion":"[0-9a-f]+"/, '"schemaVersion":"000000000000"');
      const other = await e.open(await e.fresh());
      try {
        const os = annotationStoreOf(other);
        await assert.rejects(
          os.importRecords(parseJsonl(bad.join('\n') + '\n', 'f.jsonl'), 'f.jsonl'),
          new RegExp(`f\\.jsonl line ${itemLine + 1}: .*version 000000000000 in the file but [0-9a-f]{12} here`),
        );
        assert.throws(
          () => parseJsonl(lines.join('\n').slice(0, -7), 'f.jsonl'),
          new RegExp(`f\\.jsonl line ${lines.length}: is cut off`),
        );
        assert.throws(() => parseJsonl('{"type":"header"}\nnot json\n{}\n', 'f.jsonl'), /f\.jsonl line 2: is not JSON/);
        const annLine = lines.findIndex((l) => l.includes('"type":"annotation"'));
        const badVerdict = [...lines];
        badVerdict[annLine] = badVerdict[annLine]!.replace(/"verdict":\{[^}]*\}/, '"verdict":{"supported":"maybe"}');
        await assert.rejects(
          os.importRecords(parseJsonl(badVerdict.join('\n'), 'f.jsonl'), 'f.jsonl'),
          new RegExp(`f\\.jsonl line ${annLine + 1}: verdict does not fit`),
        );
        const badEvidence = [...lines];
        badEvidence[annLine] = badEvidence[annLine]!.replace(
          /"evidence":\[[^\]]*\]/,
          '"evidence":[{"kind":"script","src":"javascript:alert(1)"}]',
        );
        await assert.rejects(
          os.importRecords(parseJsonl(badEvidence.join('\n'), 'f.jsonl'), 'f.jsonl'),
          new RegExp(`f\\.jsonl line ${annLine + 1} evidence 1: unknown evidence kind 'script'`),
        );
        assert.equal((await os.annotationsByItem()).size, 0, 'nothing written');
        // suite version: this store already has the item from another data version
        const suiteBad = lines.map((l) =>
          l.replace(/"suiteVersion":"data:[0-9a-f]+"/, '"suiteVersion":"data:ffffffffffff"'),
        );
        await assert.rejects(
          store.importRecords(parseJsonl(suiteBad.join('\n'), 'g.jsonl'), 'g.jsonl'),
          /comes from suite version data:ffffffffffff but this store has it from data:[0-9a-f]{12}/,
        );
      } finally {
        await other.close();
      }
    });
  });
  describe('CLI: loupe annotations / agreement', () => {
    const io = () => {
      const out: string[] = [];
      const err: string[] = [];
      return {
        out,
        err,
        io: {
          out: (s: string) => void out.push(s),
          err: (s: string) => void err.push(s),
          env: {
            LOUPE_ANNOTATOR: 'erin',
            ...(e.server() ? { [e.server()!.passwordEnv]: process.env[e.server()!.passwordEnv] } : {}),
          } as NodeJS.ProcessEnv,
          cwd: dir,
        },
      };
    };
    it('answer, agreement --json, export, import of a truncated file', async () => {
      const file = location;
      let t = io();
      const id = judgementItemId(
        'checklist-score',
        sha256(
          `checklist-score\u0000${canonicalJson({ instruction: 'Write', response: 'resp B', criterion: 'Depth' })}`,
        ),
      );
      assert.equal(
        await main(
          [
            'annotations',
            'answer',
            '--store',
            file,
            '--item',
            id,
            '--verdict',
            '{"score": 4, "reason": "deep"}',
            '--cite',
            'step:run-1:0',
          ],
          t.io,
        ),
        0,
        t.err.join(''),
      );
      assert.match(
        t.out.join(''),
        e.name === 'postgres' ? /by erin \(role loupe\); item now single/ : /by erin; item now single/,
      );
      t = io();
      assert.equal(
        await main(
          ['annotations', 'answer', '--store', file, '--item', id, '--verdict', '{"score": 9, "reason": "x"}'],
          t.io,
        ),
        1,
      );
      assert.match(t.err.join(''), /\$\.score: must be ≤ 5/);
      t = io();
      assert.equal(await main(['agreement', '--store', file, '--json', '--resamples', '100'], t.io), 0, t.err.join(''));
      const rep = JSON.parse(t.out.join('')) as {
        groups: Array<{ task: string; cohensKappa: { value: number } | null }>;
      };
      assert.ok(rep.groups.some((g) => g.task === 'claim-support' && g.cohensKappa !== null));
      t = io();
      assert.equal(await main(['annotations', 'export', '--store', file, '--out', 'a.jsonl'], t.io), 0, t.err.join(''));
      const text = readFileSync(join(dir, 'a.jsonl'), 'utf8');
      writeFileSync(join(dir, 'cut.jsonl'), text.slice(0, text.length - 20));
      t = io();
      assert.equal(await main(['annotations', 'import', '--store', file, 'cut.jsonl'], t.io), 1);
      assert.match(t.err.join(''), /cut\.jsonl line \d+: is cut off/);
      t = io();
      assert.equal(await main(['annotations', 'import', '--store', file, 'a.jsonl'], t.io), 0, t.err.join(''));
      assert.match(t.out.join(''), /imported 0 annotation\(s\) and 0 item\(s\); \d+ already present/);
    });
  });

  describe('queues and registered item kinds', () => {
    it('generic queues (items, audit, disagreement) leave out items of registered kinds, which their own panels serve', async () => {
      if (e.name === 'sqlite') {
        registerItemSchema(
          'test-own-panel',
          { type: 'object', required: ['ok'], properties: { ok: { type: 'boolean' } } },
          (v) => (v as { ok: boolean }).ok,
        );
      }
      const own = await e.open(await e.fresh());
      const store = annotationStoreOf(own);
      const input = { what: 'a thing only its own panel answers' };
      await store.putItem({
        id: 'own-1',
        subject: { kind: 'step', runId: 'run-1', from: 1, to: 1 },
        task: 'test-own-panel',
        input,
        inputHash: sha256(canonicalJson(input)).slice(0, 32),
        criterion: null,
        suite: 'own-panel-suite',
        runId: 'run-1',
        itemRef: 'own 1',
        suiteVersion: 'unknown',
      });
      await store.annotate({ itemId: 'own-1', annotator: 'alice', verdict: { ok: true } });
      await store.annotate({ itemId: 'own-1', annotator: 'bob', verdict: { ok: false } });
      assert.equal((await store.resolve('own-1')).tie, true, 'the two annotators disagree');
      for (const kind of ['disagreement', 'items'] as const) {
        const q = await store.openQueue({ kind, suite: 'own-panel-suite', includeResolved: true });
        assert.equal((await store.progress(q.id)).total, 0, `${kind} queue`);
      }
      const named = await store.openQueue({ kind: 'disagreement', suite: 'own-panel-suite', task: 'test-own-panel' });
      assert.equal((await store.progress(named.id)).total, 1, 'asked for by its task, the item is served');
      await own.close();
    });
  });
});

describe('migration 6', () => {
  it('a human verdict stored before the annotation model becomes an annotation, without loss', async () => {
    const f = join(dir, 'old.sqlite');
    const db = new Database(f);
    db.exec('CREATE TABLE migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    for (const m of migrations.filter((x) => x.id <= 5)) {
      db.exec(m.sql);
      db.prepare('INSERT INTO migrations VALUES (?,?,?)').run(m.id, m.name, 't');
    }
    const input = { claim: 'X rose.', sources: 'S' };
    const hash = sha256(`claim-support\u0000${canonicalJson(input)}`);
    db.prepare(
      `INSERT INTO judgements (cache_key, judge_id, task, input_hash, prompt_hash, input, raw_output, verdict, status, annotator, judged_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
    ).run(
      'k1',
      'human',
      'claim-support',
      hash,
      null,
      JSON.stringify(input),
      'checked the table',
      JSON.stringify({ supported: true, reason: 'table 2' }),
      'done',
      'dana',
      '2026-01-01T00:00:00Z',
    );
    db.close();
    const s = openStore(f);
    try {
      assert.equal(await s.schemaVersion(), migrations.at(-1)!.id);
      const as = annotationStoreOf(s);
      await as.syncFromJudgements();
      const r = await as.resolve(judgementItemId('claim-support', hash));
      assert.equal(r.decidedBy, 'single');
      assert.deepEqual(r.verdict, { supported: true, reason: 'table 2' });
      const [a] = await as.annotations(judgementItemId('claim-support', hash));
      assert.equal(a!.annotator, 'dana');
      assert.equal(a!.note, 'checked the table');
      assert.equal(a!.origin, 'migrated');
    } finally {
      s.close();
    }
  });
});
