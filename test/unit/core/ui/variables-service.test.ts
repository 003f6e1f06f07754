import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { VariablesService, pandasSnippet } from '../../../../src/core/ui/variables-service.ts';
import type { VariablesState } from '../../../../src/protocol/variables.ts';
import { sharedData } from '../../../helpers/shared.ts';

describe('variables service: pandas snippet', () => {
  const v = { name: 'RIAGENDR', label: 'Gender', file: 'DEMO_L', doc: 'NHANES/docs/Demographics/DEMO_L.pdf', page: 'Page 9', values: [{ code: '1', label: 'Male' }, { code: '2', label: 'Female' }] };

  it('reads an XPT file with read_sas(format="xport") and selects the column, commented with label, codes and page', () => {
    const s = pandasSnippet(v, '/data/NHANES/data/Demographics/DEMO_L.xpt');
    assert.equal(
      s,
      [
        '# RIAGENDR: Gender (NHANES/docs/Demographics/DEMO_L.pdf, Page 9)',
        '# codes: 1 = Male; 2 = Female',
        'import pandas as pd',
        'demo_l = pd.read_sas("/data/NHANES/data/Demographics/DEMO_L.xpt", format="xport", encoding="latin-1")',
        'riagendr = demo_l["RIAGENDR"]',
        'riagendr.describe()',
        '',
      ].join('\n'),
    );
  });

  it('uses the reader of the file type and rejects unknown types naming the file', () => {
    assert.match(pandasSnippet({ ...v, file: '2024 sheet' }, '/d/x.csv'), /^_2024_sheet = pd\.read_csv\("\/d\/x\.csv"\)$/m);
    assert.match(pandasSnippet(v, '/d/x.xlsx'), /pd\.read_excel/);
    assert.throws(() => pandasSnippet(v, '/d/x.rds'), (e: Error) => e.name === 'LoupeInputError' && e.message.includes('/d/x.rds'));
  });
});

describe('variables service on the shared NHANES and NTEWS folders', () => {
  it('builds the catalog with data paths, answers a question, and refuses a snippet without a data file', async () => {
    const root = sharedData('longda', 'benchmark');
    const cache = mkdtempSync(join(tmpdir(), 'loupe-vars-svc-'));
    const states: VariablesState['status'][] = [];
    const svc = new VariablesService({ suite: 'longda', root, survey: 'NHANES', title: 'NHANES' }, { cacheDir: cache, onState: (s) => states.push(s.status) });
    const ntews = new VariablesService({ suite: 'longda', root, survey: 'NTEWS', title: 'NTEWS' }, { cacheDir: cache });
    try {
      await svc.build();
      assert.deepEqual(states, ['building', 'ready']);
      const st = svc.state();
      const g = st.variables.find((x) => x.name === 'RIAGENDR')!;
      assert.equal(g.dataPath, 'NHANES/data/Demographics/DEMO_L.xpt');
      assert.match(svc.snippet('RIAGENDR', 'DEMO_L'), /DEMO_L\.xpt", format="xport"/);
      assert.throws(() => svc.variable('NOPE', 'DEMO_L'), /DEMO_L\.NOPE: no such variable/);
      const a = svc.ask('average body mass index of adults by sex');
      assert.equal(a.files[0]!.file, 'NHANES/docs/Demographics/DEMO_L.pdf');
      assert.ok(a.variables.some((x) => x.name === 'BMXBMI' && x.why === 'measure'));
      await ntews.build();
      assert.throws(() => ntews.snippet('EDLEVL', 'ntews22'), /no data file for table ntews22/);
    } finally {
      svc.dispose();
      ntews.dispose();
      rmSync(cache, { recursive: true, force: true });
    }
  });
});
