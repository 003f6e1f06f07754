import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { VariablesService, pandasSnippet } from '../../../../src/app/variables/variables-service.ts';
import type { VariablesState } from '../../../../src/protocol/variables.ts';
import { sharedData } from '../../../helpers/shared.ts';
import { startScriptedLlm } from '../../../helpers/scripted-llm.ts';
import { LlmClient } from '../../../../src/core/agent/llm.ts';
import { DECOMPOSE_SYSTEM_PROMPT } from '../../../../src/core/docs/question.ts';

describe('variables service: pandas snippet', () => {
  const v = {
    name: 'RIAGENDR',
    label: 'Gender',
    file: 'DEMO_L',
    doc: 'NHANES/docs/Demographics/DEMO_L.pdf',
    page: 'Page 9',
    values: [
      { code: '1', label: 'Male' },
      { code: '2', label: 'Female' },
    ],
  };

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
    assert.match(
      pandasSnippet({ ...v, file: '2024 sheet' }, '/d/x.csv'),
      /^_2024_sheet = pd\.read_csv\("\/d\/x\.csv"\)$/m,
    );
    assert.match(pandasSnippet(v, '/d/x.xlsx'), /pd\.read_excel/);
    assert.throws(
      () => pandasSnippet(v, '/d/x.rds'),
      (e: Error) => e.name === 'LoupeInputError' && e.message.includes('/d/x.rds'),
    );
  });
});

describe('variables service on the shared NHANES and NTEWS folders', () => {
  it('builds the catalog with data paths, answers a question, and refuses a snippet without a data file', async () => {
    const root = sharedData('longda', 'benchmark');
    const cache = mkdtempSync(join(tmpdir(), 'loupe-vars-svc-'));
    const states: VariablesState['status'][] = [];
    const svc = new VariablesService(
      { suite: 'longda', root, survey: 'NHANES', title: 'NHANES' },
      { cacheDir: cache, onState: (s) => states.push(s.status) },
    );
    const ntews = new VariablesService({ suite: 'longda', root, survey: 'NTEWS', title: 'NTEWS' }, { cacheDir: cache });
    try {
      await svc.build();
      assert.deepEqual(states, ['building', 'ready']);
      const st = svc.state();
      const g = st.variables.find((x) => x.name === 'RIAGENDR')!;
      assert.equal(g.dataPath, 'NHANES/data/Demographics/DEMO_L.xpt');
      assert.match(svc.snippet('RIAGENDR', 'DEMO_L'), /DEMO_L\.xpt", format="xport"/);
      assert.throws(() => svc.variable('NOPE', 'DEMO_L'), /DEMO_L\.NOPE: no such variable/);
      const a = await svc.ask('average body mass index of adults by sex');
      // the two files an analyst needs lead: the measure's (body measures) and the population's (demographics, sex)
      assert.deepEqual(
        a.files
          .slice(0, 2)
          .map((f) => f.file)
          .sort(),
        ['NHANES/docs/Demographics/DEMO_L.pdf', 'NHANES/docs/Examination/BMX_L.pdf'],
      );
      assert.ok(a.variables.some((x) => x.name === 'BMXBMI' && x.why === 'measure'));
      assert.equal(a.decomposition, undefined);
      // LLM-assisted decomposition through an OpenAI-compatible server: its measures and population are searched as
      // sub-queries; the question alone does not name the laboratory measure the model adds
      const q = 'How many people were anemic, by sex?';
      const plain = await svc.ask(q);
      let served = 0;
      // each request is a fresh conversation (turn 0): the first reply is a decomposition, the second has no JSON
      const llm = await startScriptedLlm({
        script: [
          () => ({
            content:
              served++ === 0
                ? 'Here: {"population": ["all ages"], "measures": ["hemoglobin"], "groupings": ["sex"], "design": ["examination weight"]}'
                : 'no JSON here',
          }),
        ],
      });
      try {
        const client = new LlmClient({ baseUrl: llm.baseUrl, model: 'scripted', temperature: 0, maxRetries: 0 });
        const complete = async (system: string, user: string) =>
          (
            await client.complete(
              [
                { role: 'system', content: system },
                { role: 'user', content: user },
              ],
              [],
            )
          ).message.content ?? '';
        const withModel = await svc.ask(q, { label: 'scripted-profile', complete });
        assert.deepEqual(withModel.decomposition, {
          model: 'scripted-profile',
          population: ['all ages'],
          measures: ['hemoglobin'],
          groupings: ['sex'],
          design: ['examination weight'],
          subQueries: ['hemoglobin', 'all ages'],
        });
        assert.equal(llm.requests.length, 1);
        assert.equal(llm.requests[0]!.body.messages[0]!.content, DECOMPOSE_SYSTEM_PROMPT);
        assert.equal(llm.requests[0]!.body.messages[1]!.content, q);
        const hgb = (r: typeof plain) => r.variables.findIndex((x) => x.name === 'LBXHGB');
        assert.ok(hgb(withModel) >= 0, `LBXHGB among ${withModel.variables.map((x) => x.name).join(' ')}`);
        assert.ok(
          hgb(plain) < 0 || hgb(withModel) < hgb(plain),
          `hemoglobin ranks higher with the model's sub-query (${hgb(plain)} → ${hgb(withModel)})`,
        );
        // a reply without JSON is an input error naming the model reply
        await assert.rejects(
          svc.ask(q, { label: 'scripted-profile', complete }),
          (e: Error) => e.name === 'LoupeInputError' && /model reply/.test(e.message),
        );
      } finally {
        await llm.close();
      }
      await ntews.build();
      assert.throws(() => ntews.snippet('EDLEVL', 'ntews22'), /no data file for table ntews22/);
    } finally {
      svc.dispose();
      ntews.dispose();
      rmSync(cache, { recursive: true, force: true });
    }
  });
});
