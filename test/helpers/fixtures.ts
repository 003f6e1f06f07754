/**
 * Small task fixtures shared by unit and integration tests (written by us, no third-party data): an AnalystBench-style
 * task with two sources lines, two reference figures and a two-item checklist, its agent report, and a scripted,
 * imperfect BLADE analysis of `hurricane`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Writes the AnalystBench-style task `demo` under `<root>/demo` (format loupe-analystbench/1).
 * @returns the suite root.
 */
export function writeAnalystbenchDemo(root: string): string {
  mkdirSync(join(root, 'demo', 'sources'), { recursive: true });
  mkdirSync(join(root, 'demo', 'ref'), { recursive: true });
  writeFileSync(
    join(root, 'demo', 'sources', 'table.md'),
    'Obesity prevalence was 40.3 percent overall.\nMen 39.2 percent, women 41.3 percent.\n',
  );
  writeFileSync(
    join(root, 'demo', 'ref', 'reference.md'),
    '# Brief\n\n![Obesity prevalence by sex](f1.png)\n\n![Severe obesity by age group](f2.png)\n',
  );
  writeFileSync(
    join(root, 'demo', 'checklist.json'),
    JSON.stringify([
      { question: 'What overall obesity prevalence does the report give?', answer: '40.3%' },
      { question: 'Does the report compare men and women?', answer: 'Yes' },
    ]),
  );
  writeFileSync(
    join(root, 'demo', 'task.json'),
    JSON.stringify({
      format: 'loupe-analystbench/1',
      task: 'demo',
      instruction: 'Write a short brief on adult obesity from the sources.',
      base: '.',
      sources: { docs: ['sources/*.md'] },
      reference: 'ref/reference.md',
      checklist: 'checklist.json',
    }),
  );
  return root;
}

/** The agent report of the demo task used by the scoring tests (one figure, one unsupported claim). */
export const DEMO_REPORT =
  '# Obesity\n\nObesity was 40.3% overall. It doubled since 1990.\n\n![Obesity prevalence among men and women (by sex)](figures/a.png)\n';

/** A scripted, imperfect BLADE analysis of `hurricane`: three conceptual variables, a log transform, an OLS model. */
export const HURRICANE_SUBMISSION = {
  conceptual_variables: [
    { description: 'femininity of the hurricane name', type: 'IV', columns: ['masfem'] },
    { description: 'number of deaths', type: 'DV', columns: ['log_deaths'] },
    { description: 'hurricane strength', type: 'Control', columns: ['min', 'wind'] },
  ],
  transform_code: "def transform(df):\n    df['log_deaths'] = np.log1p(df['alldeaths'])\n    return df\n",
  model_code: "def model(df):\n    return smf.ols('log_deaths ~ masfem + min', data=df).fit()\n",
};
