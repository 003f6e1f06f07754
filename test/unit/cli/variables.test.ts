import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { main } from '../../../src/cli/main.ts';
import { sharedData } from '../../helpers/shared.ts';
import { startScriptedLlm } from '../../helpers/scripted-llm.ts';

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: { out: (s: string) => out.push(s), err: (s: string) => err.push(s), env: process.env, cwd: process.cwd() },
  };
}

describe('cli: loupe variables / search --mode question / search-eval', () => {
  const root = mkdtempSync(join(tmpdir(), 'loupe-cli-vars-'));
  const cache = mkdtempSync(join(tmpdir(), 'loupe-cli-vars-cache-'));
  after(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(cache, { recursive: true, force: true });
  });
  // a survey in the LongDA layout: a Markdown codebook for a real XPT file (TCHOL_L: SEQN, WTPH2YR, LBXTC, LBDTCSI)
  mkdirSync(join(root, 'NH', 'docs'), { recursive: true });
  mkdirSync(join(root, 'NH', 'data'), { recursive: true });
  copyFileSync(
    sharedData('longda', 'benchmark', 'NHANES', 'data', 'Laboratory', 'TCHOL_L.xpt'),
    join(root, 'NH', 'data', 'TCHOL_L.xpt'),
  );
  writeFileSync(
    join(root, 'NH', 'docs', 'TCHOL_L.md'),
    [
      '# Cholesterol - Total (TCHOL_L)',
      '**Variable Name:** SEQN',
      '**SAS Label:** Respondent sequence number',
      '**Variable Name:** LBXTC',
      '**SAS Label:** Total Cholesterol (mg/dL)',
      '**English Text:** Total Cholesterol (mg/dL)',
      '**Target:** Both males and females 6 YEARS - 150 YEARS',
      '| Code or Value | Value Description | Count | Cumulative | Skip to Item |',
      '| 62 to 446 | Range of Values | 7000 | 7000 | |',
      '| . | Missing | 10 | 7010 | |',
    ].join('\n'),
  );
  writeFileSync(join(root, 'NH', 'docs', 'lab-codebook.txt'), 'Scanned codebook, no text layer\n');

  it('variables --json: entries with name, label, file, doc, page, values; undocumented columns; skipped codebooks', async () => {
    const t = io();
    assert.equal(
      await main(['variables', '--root', root, '--survey', 'nh', '--cache', cache, '--json'], t.io),
      0,
      t.err.join(''),
    );
    const r = JSON.parse(t.out.join('')) as {
      survey: string;
      coverage: { columns: number; documented: number };
      skipped: Array<{ file: string; reason: string }>;
      variables: Array<{
        name: string;
        label: string | null;
        file: string;
        doc: string | null;
        page: string | null;
        values: Array<{ code: string; label: string }>;
        documented: boolean;
        dataLabel?: string;
      }>;
    };
    assert.equal(r.survey, 'NH');
    assert.deepEqual(r.coverage, { columns: 4, documented: 2 });
    assert.deepEqual(
      r.skipped.map((s) => s.file),
      ['NH/docs/lab-codebook.txt'],
    );
    const tc = r.variables.find((v) => v.name === 'LBXTC')!;
    assert.deepEqual(
      { label: tc.label, file: tc.file, doc: tc.doc, page: tc.page },
      { label: 'Total Cholesterol (mg/dL)', file: 'TCHOL_L', doc: 'NH/docs/TCHOL_L.md', page: 'Line 4' },
    );
    assert.deepEqual(tc.values, [
      { code: '62 to 446', label: 'Range of Values' },
      { code: '.', label: 'Missing' },
    ]);
    const und = r.variables.filter((v) => !v.documented).map((v) => [v.name, v.label, v.doc, v.dataLabel]);
    assert.deepEqual(und, [
      ['WTPH2YR', null, null, 'Phlebotomy 2 Year Weight'],
      ['LBDTCSI', null, null, 'Total Cholesterol (mmol/L)'],
    ]);
  });

  it('variables with a query filters; text output marks undocumented columns; --survey is required', async () => {
    const t = io();
    assert.equal(await main(['variables', '--root', root, '--survey', 'NH', '--cache', cache, 'cholesterol'], t.io), 0);
    const text = t.out.join('');
    assert.match(text, /LBXTC\s+TCHOL_L\s+Total Cholesterol \(mg\/dL\)/);
    assert.match(text, /LBDTCSI[^\n]*\(no documentation\)\n\s+undocumented/);
    assert.match(t.err.join(''), /skipped NH\/docs\/lab-codebook\.txt/);
    const u = io();
    assert.equal(await main(['variables', '--root', root], u.io), 2);
  });

  it('search --mode question --json ranks files and names candidate variables', async () => {
    const t = io();
    assert.equal(
      await main(
        [
          'search',
          '--root',
          root,
          '--survey',
          'NH',
          '--cache',
          cache,
          '--mode',
          'question',
          '--json',
          'mean total cholesterol in mg/dL',
        ],
        t.io,
      ),
      0,
      t.err.join(''),
    );
    const r = JSON.parse(t.out.join('')) as {
      files: Array<{ file: string }>;
      variables: Array<{ name: string; why: string }>;
    };
    assert.equal(r.files[0]!.file, 'NH/docs/TCHOL_L.md');
    assert.equal(r.variables[0]!.name, 'LBXTC');
  });

  it('search --mode question with a model: the scripted decomposition adds measures the question does not name', async () => {
    const q = 'how high were blood lipid levels?';
    const without = io();
    assert.equal(
      await main(
        ['search', '--root', root, '--survey', 'NH', '--cache', cache, '--mode', 'question', '--json', q],
        without.io,
      ),
      0,
      without.err.join(''),
    );
    assert.ok(
      !(JSON.parse(without.out.join('')) as { variables: Array<{ name: string }> }).variables.some(
        (v) => v.name === 'LBXTC',
      ),
    );
    const srv = await startScriptedLlm({
      script: [
        {
          content:
            'Here: {"population": ["participants"], "measures": ["total cholesterol"], "groupings": [], "design": []}',
        },
      ],
    });
    try {
      const t = io();
      const args = [
        'search',
        '--root',
        root,
        '--survey',
        'NH',
        '--cache',
        cache,
        '--mode',
        'question',
        '--model',
        'scripted',
        '--base-url',
        srv.baseUrl,
        '--json',
        q,
      ];
      assert.equal(await main(args, t.io), 0, t.err.join(''));
      const r = JSON.parse(t.out.join('')) as { variables: Array<{ name: string }>; llm: { measures: string[] } };
      assert.deepEqual(r.llm.measures, ['total cholesterol']);
      assert.equal(r.variables[0]!.name, 'LBXTC');
      const sent = srv.requests[0]!.body;
      assert.equal(sent.messages[1]!.content, q);
      assert.match(sent.messages[0]!.content ?? '', /JSON only/);
    } finally {
      await srv.close();
    }
    const bad = io();
    assert.equal(
      await main(
        [
          'search',
          '--root',
          root,
          '--survey',
          'NH',
          '--cache',
          cache,
          '--model',
          'm',
          '--base-url',
          'http://127.0.0.1:9',
          'x',
        ],
        bad.io,
      ),
      2,
    );
  });

  it('search-eval --json reports recall@k, MRR and nDCG per mode and per split part', async () => {
    writeFileSync(
      join(root, 'labels.json'),
      JSON.stringify([
        { q: 'total cholesterol', files: ['NH/docs/TCHOL_L.md'], source: 'A' },
        { q: 'respondent sequence', files: ['NH/docs/TCHOL_L.md'], source: 'B' },
      ]),
    );
    writeFileSync(join(root, 'split.json'), JSON.stringify({ tuning: ['A'], heldBack: ['B'] }));
    const t = io();
    const args = [
      'search-eval',
      '--labels',
      join(root, 'labels.json'),
      '--split',
      join(root, 'split.json'),
      '--root',
      root,
      '--survey',
      'NH',
      '--cache',
      cache,
      '--k',
      '1',
      '--json',
    ];
    assert.equal(await main(args, t.io), 0, t.err.join(''));
    const r = JSON.parse(t.out.join('')) as {
      parts: Record<string, Record<string, { questions: number; recallAtK: number; mrr: number; ndcgAtK: number }>>;
    };
    assert.deepEqual(Object.keys(r.parts), ['all', 'tuning', 'heldBack']);
    assert.deepEqual(Object.keys(r.parts.all!), ['bm25', 'longta', 'question']);
    assert.equal(r.parts.tuning!.question!.questions, 1);
    assert.equal(r.parts.tuning!.question!.recallAtK, 1);
    const bad = io();
    assert.equal(await main([...args.slice(0, -1), '--modes', 'bm25,nope'], bad.io), 2);
  });
});
