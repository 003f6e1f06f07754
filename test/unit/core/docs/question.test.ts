import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { docsFolderFiles, openDocIndex, type DocIndex } from '../../../../src/core/docs/index.ts';
import { surveyCatalog } from '../../../../src/core/docs/survey-catalog.ts';
import {
  QuestionRetriever,
  catalogSynonyms,
  decomposeWithModel,
  parseDecomposition,
} from '../../../../src/core/docs/question.ts';
import { evaluateRetrieval, loadRetrievalLabels } from '../../../../src/core/docs/retrieval-eval.ts';
import { repoRoot, sharedData } from '../../../helpers/shared.ts';

function tmp(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `loupe-question-${prefix}-`));
}

describe('retrieval evaluation: metrics and labels', () => {
  it('recall@k, MRR and nDCG@k with binary gains, and dropping a file from the labels', () => {
    const labels = [
      { q: 'a', files: ['x', 'y'] },
      { q: 'b', files: ['z'] },
    ];
    const rank = (q: string) => (q === 'a' ? ['y', 'w', 'x'] : ['w', 'v']);
    const m = evaluateRetrieval(labels, rank, 2);
    // a: top2 = y,w → recall 1/2, first hit rank 1; b: nothing → 0
    assert.equal(m.recallAtK, 0.25);
    assert.equal(m.mrr, 0.5);
    // a: dcg = 1/log2(2) = 1, ideal = 1 + 1/log2(3); b: 0
    assert.equal(m.ndcgAtK, Number((1 / (1 + 1 / Math.log2(3)) / 2).toFixed(3)));
    const d = evaluateRetrieval(labels, rank, 2, (f) => f === 'z');
    assert.equal(d.questions, 1);
    assert.equal(d.recallAtK, 0.5);
  });

  it('resolves id-only LongDA labels against benchmark.csv (query + additional_info) and names bad entries', () => {
    const dir = tmp('labels');
    try {
      writeFileSync(
        join(dir, 'benchmark.csv'),
        'survey,source,internal_id,query,answer_structure,additional_info,answer\nS,Brief 1,1,How many?,single_number,Adults only.,3\n',
      );
      writeFileSync(
        join(dir, 'labels.json'),
        JSON.stringify({
          questions: [
            { survey: 'S', source: 'Brief 1', internal_id: 1, files: ['S/docs/a.pdf'] },
            { q: 'free text', files: ['b'] },
          ],
        }),
      );
      const l = loadRetrievalLabels(join(dir, 'labels.json'), dir);
      assert.equal(l[0]!.q, 'How many? Adults only.');
      assert.equal(l[0]!.source, 'Brief 1');
      assert.equal(loadRetrievalLabels(join(dir, 'labels.json'), dir, 'query')[0]!.q, 'How many?');
      assert.equal(l[1]!.q, 'free text');
      writeFileSync(
        join(dir, 'bad.json'),
        JSON.stringify([{ survey: 'S', source: 'Brief 1', internal_id: 9, files: ['a'] }]),
      );
      assert.throws(() => loadRetrievalLabels(join(dir, 'bad.json'), dir), /bad\.json entry 1: no benchmark\.csv row/);
      writeFileSync(join(dir, 'nofiles.json'), JSON.stringify([{ q: 'x', files: [] }]));
      assert.throws(() => loadRetrievalLabels(join(dir, 'nofiles.json'), dir), /nofiles\.json entry 1: "files"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the LongDA labels agree with the reference solutions: per publication, the codebooks of exactly the data files the solution reads', () => {
    const labels = JSON.parse(
      readFileSync(join(repoRoot, 'benchmarks', 'longda', 'retrieval-labels.json'), 'utf8'),
    ) as { questions: Array<{ source: string; files: string[] }> };
    const refDir = join(repoRoot, 'benchmarks', 'longda', 'reference');
    const scripts = readdirSync(refDir).filter((f) => /^NHANES_NCHS_Data_Brief_No\._\d+\.py$/.test(f));
    assert.ok(scripts.length >= 5, `reference solutions: ${scripts.length}`);
    for (const f of scripts) {
      const brief = /No\._(\d+)/.exec(f)![1]!;
      const read = new Set([...readFileSync(join(refDir, f), 'utf8').matchAll(/([A-Z0-9_]+)\.xpt/g)].map((m) => m[1]!));
      const labelled = new Set(
        labels.questions
          .filter((q) => q.source === `NCHS Data Brief No. ${brief}`)
          .flatMap((q) =>
            q.files.map((p) =>
              p
                .split('/')
                .pop()!
                .replace(/\.pdf$/, ''),
            ),
          ),
      );
      assert.deepEqual([...labelled].sort(), [...read].sort(), `brief ${brief}`);
    }
  });

  it('parses an LLM decomposition (JSON inside prose; bad fields dropped) and rejects a reply without JSON', async () => {
    const d = parseDecomposition(
      'Sure! {"population": ["children 2-4"], "measures": ["hemoglobin", 3], "groupings": "sex"}',
    );
    assert.deepEqual(d, { population: ['children 2-4'], measures: ['hemoglobin'], groupings: [], design: [] });
    assert.throws(() => parseDecomposition('no idea'), /model reply: not a JSON decomposition/);
    let seen = '';
    const r = await decomposeWithModel('anemia in children?', async (system, user) => {
      seen = `${system}\n---\n${user}`;
      return '{"measures": ["hemoglobin"]}';
    });
    assert.deepEqual(r.measures, ['hemoglobin']);
    assert.match(seen, /---\nanemia in children\?$/);
  });

  it('builds synonyms from acronyms the catalog defines, in both directions', () => {
    const syn = catalogSynonyms([
      'Body Mass Index (BMI)',
      'Direct high-density lipoprotein (HDL) cholesterol',
      'Not an acronym (XYZ)',
    ]);
    assert.deepEqual(syn.get('bmi'), ['body', 'mass', 'index']);
    assert.deepEqual(syn.get('mass'), ['bmi']);
    assert.deepEqual(syn.get('hdl'), ['high', 'density', 'lipoprotein']);
    assert.equal(syn.get('xyz'), undefined);
  });
});

describe('question-level retrieval over the NHANES documentation (real shared files)', () => {
  const root = sharedData('longda', 'benchmark');
  const cache = tmp('cache');
  let idx: DocIndex;
  let qr: QuestionRetriever;
  before(async () => {
    idx = await openDocIndex({ root, cacheDir: cache, files: docsFolderFiles(root, 'NHANES') });
    await idx.build();
    qr = new QuestionRetriever(idx, surveyCatalog(idx, join(root, 'NHANES', 'data'), root).variables);
  });
  after(() => {
    idx?.close();
    rmSync(cache, { recursive: true, force: true });
  });

  it('decomposes a question: groupings from the design data, measures, the demographics file first', () => {
    const r = qr.ask('How many adults were ever told by a doctor they had asthma, for men and women?');
    assert.equal(r.concepts.family, 'NHANES');
    assert.deepEqual(r.concepts.groupings, ['age', 'sex']);
    assert.ok(r.concepts.measures.includes('asthma'));
    assert.equal(r.files[0]!.file, 'NHANES/docs/Demographics/DEMO_L.pdf');
    assert.ok(
      r.files.slice(0, 3).some((f) => f.file === 'NHANES/docs/Questionnaire/MCQ_L.pdf'),
      JSON.stringify(r.files.slice(0, 3)),
    );
    assert.ok(r.variables.some((v) => v.name === 'RIAGENDR' && v.why === 'sex'));
    assert.ok(r.variables.some((v) => v.name === 'WTMEC2YR' && v.why === 'design'));
    assert.ok(
      r.variables
        .filter((v) => v.why === 'measure')
        .slice(0, 5)
        .some((v) => v.file === 'MCQ_L' && /asthma/i.test(v.label ?? '')),
    );
  });

  it('held-back LongDA questions: recall@10 of needed files ≥ 0.6 and ≥ the page BM25 baseline', () => {
    const split = JSON.parse(readFileSync(join(repoRoot, 'benchmarks', 'longda', 'retrieval-split.json'), 'utf8')) as {
      heldBack: string[];
    };
    const held = new Set(split.heldBack);
    const labels = loadRetrievalLabels(join(repoRoot, 'benchmarks', 'longda', 'retrieval-labels.json'), root).filter(
      (l) => held.has(l.source!),
    );
    assert.ok(labels.length >= 10, `held-back questions: ${labels.length}`);
    const question = evaluateRetrieval(labels, (q) => qr.ask(q).files.map((f) => f.file), 10);
    const pages = evaluateRetrieval(
      labels,
      (q) => {
        const seen: string[] = [];
        for (const h of idx.search(q, { mode: 'bm25', top: 300 })) if (!seen.includes(h.file)) seen.push(h.file);
        return seen.slice(0, 10);
      },
      10,
    );
    assert.ok(question.recallAtK >= 0.6, `question mode recall@10 ${question.recallAtK}`);
    assert.ok(question.recallAtK >= pages.recallAtK, `question ${question.recallAtK} vs bm25 ${pages.recallAtK}`);
  });
});

describe('question-level retrieval: design data of another family (SDR, real shared dictionary)', () => {
  it('detects the NCSES family from its catalog and proposes its weight and grouping variables', async () => {
    const root = sharedData('longda', 'benchmark');
    const cache = tmp('sdr');
    const idx = await openDocIndex({ root, cacheDir: cache, files: docsFolderFiles(root, 'SDR') });
    try {
      await idx.build();
      const qr = new QuestionRetriever(idx, surveyCatalog(idx, join(root, 'SDR', 'data'), root).variables);
      const r = qr.ask('What share of women doctorate holders worked in academic positions as adjunct faculty?');
      assert.equal(r.concepts.family, 'NCSES SESTAT');
      assert.deepEqual(r.concepts.groupings, ['sex']);
      assert.ok(r.variables.some((v) => v.name === 'WTSURVY' && v.why === 'design'));
      assert.ok(r.variables.some((v) => v.name === 'SEX' && v.why === 'sex'));
      assert.ok(
        r.variables
          .filter((v) => v.why === 'measure')
          .slice(0, 3)
          .some((v) => v.name === 'ACADADJF'),
      );
    } finally {
      idx.close();
      rmSync(cache, { recursive: true, force: true });
    }
  });
});
