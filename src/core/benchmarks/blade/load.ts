/**
 * BLADE loader: `datasets/<name>/{data.csv, info.json, annotations.csv, mcq_dataset.json}` → one
 * block per dataset. Kind `blade` gives the analysis task (research question); `blade-mcq` gives the
 * dataset's MCQs as items. Source: spec §1.2; BLADE `blade_bench/utils.py`, `data/dataset.py`.
 */
import { openSync, readSync, closeSync, readdirSync, existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { LoupeInputError, errorMessage } from '../../util/errors.ts';
import { assertNotHeldDatabaseFile } from '../../util/held-files.ts';
import { nullLogger } from '../../util/log.ts';
import type { Block, BlockItem, LoadSuiteOptions, Suite, VisibleFile } from '../../suites/types.ts';
import type { BladeAnnotations, BladeMcqItem, BladeMcqSet, ColumnInfo } from './items.ts';
import { fileSize, invalidUtf8Lines, isDir, isFile, readJson, safeId } from '../../suites/util.ts';
import { readFetchStamp } from '../../suites/stamp.ts';
import { countDecisions, parseBladeAnnotations, parseBladeMcqs } from './annotations.ts';

const BLADE_FILES = ['data.csv', 'info.json', 'annotations.csv', 'mcq_dataset.json'];

/**
 * Finds the `datasets/` folder: `root` itself, `root/datasets` or `root/blade_bench/datasets`.
 * @throws LoupeInputError when missing, empty, or no subfolder holds a BLADE file.
 */
export function resolveBladeRoot(root: string): string {
  const abs = resolve(root);
  if (!existsSync(abs)) throw new LoupeInputError(abs, 'BLADE root does not exist');
  if (!isDir(abs)) throw new LoupeInputError(abs, 'BLADE root must be the datasets/ folder');
  for (const c of [abs, join(abs, 'datasets'), join(abs, 'blade_bench', 'datasets')]) {
    if (datasetDirs(c).length > 0) return c;
  }
  if (readdirSync(abs).filter((n) => !n.startsWith('.')).length === 0) {
    throw new LoupeInputError(abs, 'empty folder: not a BLADE datasets/ root');
  }
  throw new LoupeInputError(abs, `not a BLADE datasets/ root: no subfolder holds any of ${BLADE_FILES.join(', ')}`);
}

function datasetDirs(dir: string): string[] {
  if (!isDir(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => (e.isDirectory() || e.isSymbolicLink()) && !e.name.startsWith('.') && !e.name.startsWith('_'))
    .map((e) => join(dir, e.name))
    .filter((d) => isDir(d) && BLADE_FILES.some((f) => isFile(join(d, f))))
    .sort((a, b) => basename(a).localeCompare(basename(b)));
}

/** Reads the header line of a CSV without loading the file. */
function csvHeader(file: string): string[] {
  assertNotHeldDatabaseFile(file);
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(64 * 1024);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const text = buf
      .subarray(0, n)
      .toString('utf8')
      .replace(/^\uFEFF/, '');
    const line = text.split(/\r?\n/)[0] ?? '';
    return line.split(',').map((s) => s.trim().replace(/^"|"$/g, ''));
  } finally {
    closeSync(fd);
  }
}

interface InfoJson {
  researchQuestions: string[];
  description: string;
  columns: ColumnInfo[];
  numRows?: number;
}

/**
 * Parses a BLADE `info.json` (spec §1.2.2).
 * @throws LoupeInputError naming the file for invalid JSON / non-UTF-8 / missing `research_questions`.
 */
export function parseBladeInfo(file: string): InfoJson {
  const j = readJson(file);
  if (typeof j !== 'object' || j === null) throw new LoupeInputError(file, 'expected a JSON object');
  const o = j as Record<string, unknown>;
  const rq = o.research_questions;
  if (!Array.isArray(rq) || rq.length === 0 || typeof rq[0] !== 'string') {
    throw new LoupeInputError(`${file} research_questions`, 'missing or empty (need a list of strings)');
  }
  const dd = (o.data_desc ?? {}) as Record<string, unknown>;
  const fields = Array.isArray(dd.fields) ? (dd.fields as Record<string, unknown>[]) : [];
  const columns: ColumnInfo[] = fields.map((f) => {
    const props = (f.properties ?? {}) as Record<string, unknown>;
    const { description, dtype, semantic_type, ...rest } = props;
    return {
      name: String(f.column ?? ''),
      description: typeof description === 'string' ? description : '',
      ...(typeof dtype === 'string' ? { dtype } : {}),
      ...(typeof semantic_type === 'string' ? { semanticType: semantic_type } : {}),
      properties: rest,
    };
  });
  return {
    researchQuestions: rq.map(String),
    description: typeof dd.dataset_description === 'string' ? dd.dataset_description : '',
    columns,
    ...(typeof dd.num_rows === 'number' ? { numRows: dd.num_rows } : {}),
  };
}

/**
 * Loads BLADE from its `datasets/` folder.
 * @param root the `datasets/` folder (or a parent holding `datasets/` or `blade_bench/datasets/`).
 * @param kind `blade` (analysis: item = research question) or `blade-mcq` (items = MCQs).
 * @returns one block per dataset folder. Problems name the file (and `:LINE column C` for annotation
 *   cells). A dataset without `data.csv` (soccer, conversation) gets a "data.csv missing" problem and
 *   is not runnable for `blade`; for `blade-mcq` a dataset is runnable when it has MCQs.
 * @throws LoupeInputError when the root is not a BLADE datasets folder.
 */
export function loadBlade(root: string, opts: LoadSuiteOptions = {}, kind: 'blade' | 'blade-mcq' = 'blade'): Suite {
  const log = opts.log ?? nullLogger;
  const dir = resolveBladeRoot(root);
  const stamp = readFetchStamp(dir) ?? readFetchStamp(resolve(dir, '..')) ?? readFetchStamp(resolve(dir, '..', '..'));
  const suiteId = `${kind}:${safeId(basename(dir) === 'datasets' ? basename(resolve(dir, '..')) : basename(dir))}`;
  const suiteProblems: string[] = [];
  const blocks: Block[] = [];
  const datasets = datasetDirs(dir);
  // A dataset folder with none of the BLADE files (e.g. an empty or unfinished download) is not a
  // block, but it is said so rather than silently dropped.
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const d = join(dir, e.name);
    if (e.name.startsWith('.') || e.name.startsWith('_') || !isDir(d) || datasets.includes(d)) continue;
    suiteProblems.push(`${d}: none of ${BLADE_FILES.join(', ')} in this dataset folder; not listed`);
  }
  for (const d of datasets) {
    const name = basename(d);
    const problems: string[] = [];
    const f = (n: string) => join(d, n);
    let info: InfoJson | undefined;
    if (!isFile(f('info.json'))) {
      problems.push(`${f('info.json')} missing: no research question or dataset description`);
    } else {
      try {
        info = parseBladeInfo(f('info.json'));
      } catch (e) {
        problems.push(errorMessage(e));
      }
    }
    const hasData = isFile(f('data.csv'));
    if (!hasData) {
      problems.push(
        `${f('data.csv')} missing: the dataset's table is not on disk (download it from the BLADE repository)`,
      );
    } else if (info && info.columns.length) {
      try {
        const header = csvHeader(f('data.csv'));
        const missingCols = info.columns.map((c) => c.name).filter((c) => !header.includes(c));
        if (missingCols.length) {
          problems.push(`${f('data.csv')}:1: columns described in info.json are absent: ${missingCols.join(', ')}`);
        }
      } catch (e) {
        problems.push(`${f('data.csv')}: cannot read header (${errorMessage(e)})`);
      }
    }
    if (hasData && fileSize(f('data.csv')) <= 256 * 1024 * 1024) {
      // pandas.read_csv (the agent's first step) fails on bytes that are not UTF-8: say where they are.
      try {
        const bad = invalidUtf8Lines(readFileSync(f('data.csv')));
        if (bad.length) {
          problems.push(
            `${f('data.csv')}:${bad[0]}: not valid UTF-8${bad.length > 1 ? ` (${bad.length} lines)` : ''}; read it with an explicit encoding`,
          );
        }
      } catch (e) {
        problems.push(`${f('data.csv')}: cannot read (${errorMessage(e)})`);
      }
    }
    let annotations: BladeAnnotations | undefined;
    if (isFile(f('annotations.csv'))) {
      try {
        const r = parseBladeAnnotations(f('annotations.csv'));
        annotations = r.annotations;
        problems.push(...r.problems);
      } catch (e) {
        problems.push(errorMessage(e));
      }
    } else if (kind === 'blade') {
      problems.push(`${f('annotations.csv')} missing: no ground truth, runs cannot be scored`);
    }
    let mcqs: BladeMcqSet | undefined;
    if (isFile(f('mcq_dataset.json'))) {
      try {
        const r = parseBladeMcqs(f('mcq_dataset.json'));
        mcqs = r.mcqs;
        problems.push(...r.problems);
      } catch (e) {
        problems.push(errorMessage(e));
      }
    } else if (kind === 'blade-mcq') problems.push(`${f('mcq_dataset.json')} missing: no MCQs for this dataset`);

    const visibleData: VisibleFile[] = hasData
      ? [{ path: f('data.csv'), rel: 'data.csv', size: fileSize(f('data.csv')) }]
      : [];
    const visibleDocs: VisibleFile[] = info
      ? [{ path: f('info.json'), rel: 'info.json', size: fileSize(f('info.json')) }]
      : [];
    let items: BlockItem[];
    let runnable: boolean;
    if (kind === 'blade') {
      items = info ? [{ type: 'blade-question', id: 'rq', question: info.researchQuestions[0]! }] : [];
      runnable = hasData && !!info;
    } else {
      items = (mcqs?.mcqs ?? []).map((q): BladeMcqItem => ({
        type: 'blade-mcq',
        id: q.id,
        family: q.family,
        mcType: q.mcType,
        conceptualVariable: q.conceptualVariable,
        options: q.options,
      }));
      runnable = !!info && items.length > 0;
    }
    const hiddenFiles = ['annotations.csv', 'mcq_dataset.json', 'annotations.pkl'].map(f);
    blocks.push({
      id: safeId(name),
      suite: kind,
      suiteId,
      title: name,
      items,
      visible: {
        data: visibleData,
        docs: visibleDocs,
        missing: hasData ? [] : ['data.csv'],
        ...(info
          ? {
              datasetDescription: info.description,
              columns: info.columns,
              researchQuestions: info.researchQuestions,
            }
          : {}),
      },
      hidden: { files: hiddenFiles, ...(annotations ? { annotations } : {}), ...(mcqs ? { mcqs } : {}) },
      runnable,
      problems,
      blade: { dataset: name, counts: countDecisions(annotations, mcqs) },
    });
  }
  log.info(`BLADE (${kind}): ${blocks.length} datasets from ${dir}`);
  return {
    id: suiteId,
    kind,
    title: kind === 'blade' ? 'BLADE' : 'BLADE MCQ',
    version: stamp?.revision ?? 'unknown',
    root: dir,
    source: {
      kind: stamp ? 'fetched' : 'local',
      root: dir,
      upstream: 'https://github.com/behavioral-data/BLADE',
      ...(stamp?.revision ? { revision: stamp.revision } : {}),
    },
    blocks,
    problems: suiteProblems,
  };
}
