/**
 * Builds `retrieval-labels.json`: for each NHANES question of LongDA's `benchmark.csv`, the codebook
 * files that define the variables needed to answer it. Run:
 *   node benchmarks/longda/build-retrieval-labels.ts [LONGDA_BENCHMARK_DIR]
 * (default `$LOUPE_SHARED/data/longda/benchmark`, LOUPE_SHARED defaulting to ../shared).
 *
 * Method (recorded in the JSON):
 * 1. Variable → codebook file is derived programmatically: every NHANES codebook PDF is split into
 *    pages with Loupe's own extractor, and a file "defines" X when it contains `Variable Name: X`.
 *    Variables defined in several files (e.g. the phlebotomy weight WTPH2YR) are not used as labels.
 * 2. Question → variables uses a small hand-written table below: each publication's topic variables,
 *    plus modifiers triggered by words of the question (HDL, awareness, counseling, weight status, …).
 *    Every question needs the demographics file (age, sex, survey weights live in DEMO_L).
 * 3. Only `survey, source, internal_id` identify a question: no benchmark text is stored in the repo.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { openDocIndex } from '../../src/core/docs/index.ts';

const here = dirname(fileURLToPath(import.meta.url));
const benchDir = resolve(
  process.argv[2] ??
    join(process.env.LOUPE_SHARED ?? join(here, '..', '..', '..', 'shared'), 'data', 'longda', 'benchmark'),
);

/** Topic variables per NCHS data brief number, and modifiers: [regex on question, variables]. */
const TOPICS: Record<string, { base: string[]; modifiers?: Array<[RegExp, string[]]> }> = {
  '508': { base: ['BMXBMI'] },
  '511': { base: ['BPXOSY1', 'BPXODI1', 'BPQ150'], modifiers: [[/aware/i, ['BPQ020']]] },
  '515': {
    base: [],
    modifiers: [
      [/HDL/i, ['LBDHDD']],
      [/total cholesterol/i, ['LBXTC']],
    ],
  },
  '516': { base: ['DIQ010', 'LBXGH', 'LBXGLU'], modifiers: [[/weight/i, ['BMXBMI']]] },
  '527': {
    base: ['DPQ010'],
    modifiers: [
      [/difficult/i, ['DPQ100']],
      [/counsel|therapy/i, ['HUQ090']],
    ],
  },
  '533': { base: ['DR1FS', 'DR1IKCAL'], modifiers: [[/weight status/i, ['BMXBMI']]] },
  '538': { base: ['DRD340', 'DRD360'], modifiers: [[/types/i, ['DRD350A', 'DRD370A']]] },
};
/** Everyone needs age / sex / weights (DEMO_L); these modifiers add specific demographic variables. */
const DEMOGRAPHICS: Array<[RegExp, string[]]> = [
  [/.*/, ['RIDAGEYR', 'WTMEC2YR']],
  [/\bmen\b|women|male|female|sex/i, ['RIAGENDR']],
  [/education/i, ['DMDEDUC2']],
  [/income|poverty/i, ['INDFMPIR']],
];

const docsRoot = join(benchDir, 'NHANES', 'docs');
const idx = await openDocIndex({ root: docsRoot, cacheDir: join(tmpdir(), 'loupe-docs-cache') });
const rep = await idx.build();
const definedIn = new Map<string, Set<string>>();
for (const f of rep.files) {
  if (f.kind !== 'Page') continue;
  for (const u of idx.units(f.file)) {
    for (const m of u.text.matchAll(/Variable Name: ([A-Z0-9_]+)/g)) {
      const set = definedIn.get(m[1]!) ?? new Set<string>();
      set.add(`NHANES/docs/${f.file}`);
      definedIn.set(m[1]!, set);
    }
  }
}
idx.close();

type Row = { survey: string; source: string; internal_id: string; query: string; additional_info: string };
const rows = parse(readFileSync(join(benchDir, 'benchmark.csv')), { columns: true, skip_empty_lines: true }) as Row[];
const questions: Array<{ survey: string; source: string; internal_id: number; variables: string[]; files: string[] }> =
  [];
const unresolved = new Set<string>();
for (const r of rows) {
  if (r.survey !== 'NHANES') continue;
  const brief = /No\. (\d+)/.exec(r.source)?.[1] ?? '';
  const topic = TOPICS[brief];
  if (!topic) continue;
  const text = `${r.query} ${r.additional_info}`;
  const vars = new Set(topic.base);
  for (const [re, vs] of topic.modifiers ?? []) if (re.test(text)) vs.forEach((v) => vars.add(v));
  for (const [re, vs] of DEMOGRAPHICS) if (re.test(r.query)) vs.forEach((v) => vars.add(v));
  const files = new Set<string>();
  for (const v of vars) {
    const d = definedIn.get(v);
    if (!d) unresolved.add(v);
    else if (d.size === 1) files.add([...d][0]!);
  }
  if (topic.base.length === 0 && vars.size <= 3) {
    // a follow-up question without its topic word (e.g. "for men by age group"): inherit the block's last topic
    const prev = questions.filter((q) => q.source === r.source).at(-1);
    prev?.files.forEach((f) => files.add(f));
    prev?.variables.forEach((v) => vars.add(v));
  }
  questions.push({
    survey: r.survey,
    source: r.source,
    internal_id: Number(r.internal_id),
    variables: [...vars].sort(),
    files: [...files].sort(),
  });
}
if (unresolved.size) throw new Error(`variables not found in any codebook: ${[...unresolved].join(', ')}`);

const out = {
  description:
    'LongDA retrieval labels: for each NHANES question (identified by survey, source, internal_id of benchmark.csv), the codebook files defining the variables it needs.',
  method: [
    'variable -> file: programmatic; a file defines X when one of its pages contains "Variable Name: X" (Loupe PDF units); variables defined in several files are not used as file labels',
    'question -> variables: hand-written topic table per NCHS data brief plus keyword modifiers (see benchmarks/longda/build-retrieval-labels.ts)',
    'every question needs Demographics/DEMO_L.pdf (age RIDAGEYR, weight WTMEC2YR, sex RIAGENDR, education DMDEDUC2, income INDFMPIR)',
    "question text is not stored here (the benchmark's text stays in the shared data): loupe search-eval reads query + additional_info from benchmark.csv by (survey, source, internal_id)",
    'checked against the reference solutions: per publication, the labelled codebooks are exactly those of the data files benchmarks/longda/reference/*.py read (test/unit/core/docs/question.test.ts)',
    'split for tuning vs held-back evaluation by publication: retrieval-split.json (fixed before any question-mode work)',
  ],
  built: new Date().toISOString().slice(0, 10),
  questions,
};
writeFileSync(join(here, 'retrieval-labels.json'), JSON.stringify(out, null, 1) + '\n');
console.log(`${questions.length} questions labelled; ${definedIn.size} variables mapped to files`);
