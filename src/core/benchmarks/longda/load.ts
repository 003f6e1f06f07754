/**
 * LongDA loader: `benchmark.csv` + `<SURVEY>/{data,docs}` → one block per publication
 * (`survey` + `source`). Source: spec §2.2; LongTA `main.py` (grouping, q_ids) and
 * `utils.py::get_data_and_doc_paths` (recursive, case-insensitive listing).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { LoupeInputError } from '../../util/errors.ts';
import { nullLogger } from '../../util/log.ts';
import type { Block, LoadSuiteOptions, Suite, VisibleFile } from '../../suites/types.ts';
import type { LongdaQuery, ReadAnswerStructure } from './items.ts';
import { fileSize, isDir, isFile, listFilesRecursive, parseCsvFile, posixRelative, safeId } from '../../suites/util.ts';
import { readFetchStamp } from '../../suites/stamp.ts';
import { parseAnswerStructure, parseGroundTruth } from './parse.ts';
import publicationMap from '../../../../benchmarks/longda/publications.json' with { type: 'json' };

const REQUIRED = ['survey', 'source', 'query', 'answer_structure', 'answer'];

/**
 * Finds the folder holding `benchmark.csv`: `root` itself or `root/benchmark`.
 * @throws LoupeInputError when `root` is missing, empty, or holds no `benchmark.csv`.
 */
export function resolveLongdaRoot(root: string): string {
  const abs = resolve(root);
  if (!existsSync(abs)) throw new LoupeInputError(abs, 'LongDA root does not exist');
  if (!isDir(abs)) throw new LoupeInputError(abs, 'LongDA root must be a folder holding benchmark.csv');
  if (isFile(join(abs, 'benchmark.csv'))) return abs;
  if (isFile(join(abs, 'benchmark', 'benchmark.csv'))) return join(abs, 'benchmark');
  if (readdirSync(abs).filter((n) => !n.startsWith('.')).length === 0) {
    throw new LoupeInputError(abs, 'empty folder: not a LongDA root (no benchmark.csv)');
  }
  throw new LoupeInputError(abs, 'not a LongDA root: no benchmark.csv here or in benchmark/');
}

/** The queries of one block (one publication: `survey` + `source`) of `benchmark.csv`. */
export interface LongdaCsvBlock {
  /** The block id (`safeId(survey_source)`, `-2`, `-3`, ... when two publications make the same id). */
  id: string;
  survey: string;
  source: string;
  /** Its queries, in position order. */
  queries: LongdaQuery<ReadAnswerStructure>[];
  /** Problems of its rows (`FILE:LINE column C: ...`). */
  problems: string[];
}

/** `benchmark.csv` (or a LongTA results file, which has its columns) as {@link readLongdaCsv} reads it. */
export interface LongdaCsv {
  /** Blocks in order of first appearance (LongTA `main.py`). */
  blocks: LongdaCsvBlock[];
  /** Every query kept, in file order. */
  queries: LongdaQuery<ReadAnswerStructure>[];
  /** Each query's record, every column of the file by name (a results file's `my_answer`, `q_id`), as `queries`. */
  records: Array<Record<string, string>>;
  /** Problems of the file: malformed records, empty survey / source, non-contiguous blocks, and every block's. */
  problems: string[];
}

/**
 * The one reader of LongDA's `benchmark.csv` (issue 40): groups rows into blocks by `survey` + `source` in order of
 * first appearance and numbers each block's queries by position, as LongTA's `main.py` does (q_id
 * `{survey}_{source}_q{i}`; a record the CSV reader dropped still takes its position). The loader and the scoring of a
 * LongTA results file both read through it.
 * @param file the file's path (named in problems and errors); `o.text` its text when already read (a results file).
 * @param o.strict a results file scored as it is (every row counts, LongTA reads it with pandas): a malformed record,
 *   an empty survey or source, or a missing column throws; a row whose `answer_structure` the parser refuses is kept
 *   with a {@link ReadAnswerStructure} `invalid`. Otherwise (the suite loader) such rows are skipped and reported.
 * @returns blocks, queries in file order with their records, problems.
 * @throws LoupeInputError naming the file (unreadable, not UTF-8 header, missing column) or, strict, `file:line`.
 * Source: spec §2.2; LongTA `main.py`.
 */
export function readLongdaCsv(file: string, o: { text?: string; strict?: boolean } = {}): LongdaCsv {
  const strict = o.strict === true;
  const text = o.text?.replace(/^\uFEFF/, '');
  const {
    header,
    rows,
    problems: csvProblems,
  } = parseCsvFile(file, { ...(text !== undefined ? { text } : {}), ...(strict ? {} : { requiredColumns: REQUIRED }) });
  if (strict) {
    for (const c of REQUIRED) if (!header.includes(c)) throw new LoupeInputError(file, `missing column '${c}'`);
    if (csvProblems.length) {
      throw new LoupeInputError(
        file,
        `not valid CSV: ${csvProblems[0]!.startsWith(`${file}:`) ? csvProblems[0]!.slice(file.length + 1) : csvProblems[0]!}`,
      );
    }
  }
  const suiteProblems: string[] = [...csvProblems];

  interface Group {
    survey: string;
    source: string;
    rows: typeof rows;
    lastIndex: number;
  }
  const groups = new Map<string, Group>();
  rows.forEach((r, i) => {
    const survey = r.cells.survey!.trim();
    const source = r.cells.source!.trim();
    if (!survey || !source) {
      if (strict) throw new LoupeInputError(`${file}:${r.line}`, 'empty survey or source');
      suiteProblems.push(`${file}:${r.line}: empty ${!survey ? 'survey' : 'source'} column; row skipped`);
      return;
    }
    const key = `${survey}\u0000${source}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { survey, source, rows: [], lastIndex: i }));
    else if (g.lastIndex !== i - 1) {
      suiteProblems.push(`${file}:${r.line}: rows of block '${survey} / ${source}' are not contiguous`);
    }
    g.lastIndex = i;
    g.rows.push(r);
  });

  // Positions in a block count every record of the original file that belongs to it, including
  // records dropped as malformed CSV / not UTF-8 (pandas, and so LongTA, would still number them).
  const slotLines = assignDroppedRecords(file, csvProblems, rows, groups, suiteProblems, text);

  const usedIds = new Set<string>();
  const blocks: LongdaCsvBlock[] = [];
  const kept: Array<{ q: LongdaQuery<ReadAnswerStructure>; cells: Record<string, string> }> = [];
  for (const g of groups.values()) {
    let id = safeId(`${g.survey}_${g.source}`);
    for (let k = 2; usedIds.has(id); k++) id = `${safeId(`${g.survey}_${g.source}`)}-${k}`;
    usedIds.add(id);
    const problems: string[] = [];
    const queries: LongdaQuery<ReadAnswerStructure>[] = [];
    const slots = slotLines.get(`${g.survey}\u0000${g.source}`) ?? g.rows.map((r) => r.line);
    for (const r of g.rows) {
      const at = (col: string) => `${file}:${r.line} column ${col}`;
      // Every row of the block takes its position, skipped or not (also rows dropped by the CSV
      // reader): LongTA's q_id is the 1-based row position in the block, so a skipped row must not
      // shift the ids of the rows after it.
      const pos = slots.indexOf(r.line) + 1;
      const cell = (r.cells.answer_structure ?? '').trim();
      const parsed = parseAnswerStructure(cell);
      let st: ReadAnswerStructure;
      if (parsed.ok) st = parsed.value;
      else if (strict) st = { kind: 'invalid', text: cell, error: parsed.error };
      else {
        problems.push(`${at('answer_structure')}: ${parsed.error}; query q${pos} skipped`);
        continue;
      }
      const gt = parseGroundTruth(r.cells.answer ?? '');
      let groundTruth: number | number[] | null = null;
      if (!gt.ok) problems.push(`${at('answer')}: ${gt.error}; ground truth set to none`);
      else groundTruth = gt.value;
      if (groundTruth !== null) {
        if (st.kind === 'single_number' && Array.isArray(groundTruth)) {
          problems.push(`${at('answer')}: a list answers a single_number query`);
        } else if (st.kind === 'list') {
          const want = st.length;
          const got = Array.isArray(groundTruth) ? groundTruth.length : 1;
          if (got !== want) problems.push(`${at('answer')}: ${got} value(s) for ${want} label(s)`);
        }
      }
      const internalRaw = (r.cells.internal_id ?? '').trim();
      const internalId = internalRaw === '' ? pos : Number(internalRaw);
      if (!Number.isInteger(internalId)) problems.push(`${at('internal_id')}: '${internalRaw}' is not an integer`);
      else if (internalId !== pos) {
        problems.push(
          `${at('internal_id')}: ${internalId} differs from position ${pos} in block (ids follow position)`,
        );
      }
      const qid = `q${pos}`;
      const q: LongdaQuery<ReadAnswerStructure> = {
        type: 'longda-query',
        id: qid,
        uid: `${id}/${qid}`,
        longdaId: `${g.survey}_${g.source}_q${pos}`,
        survey: g.survey,
        source: g.source,
        internalId: Number.isInteger(internalId) ? internalId : pos,
        question: (r.cells.query ?? '').trim(),
        answerStructure: st,
        additionalInfo: (r.cells.additional_info ?? '').trim(),
        groundTruth,
        answerText: r.cells.answer ?? '',
        row: r.line,
      };
      queries.push(q);
      kept.push({ q, cells: r.cells });
    }
    blocks.push({ id, survey: g.survey, source: g.source, queries, problems });
    for (const p of problems.filter((p) => p.startsWith(file))) suiteProblems.push(p);
  }
  kept.sort((a, b) => a.q.row - b.q.row);
  return { blocks, queries: kept.map((k) => k.q), records: kept.map((k) => k.cells), problems: suiteProblems };
}

/**
 * Loads a LongDA benchmark folder.
 * @param root folder with `benchmark.csv` (or its parent holding `benchmark/`).
 * @param opts `publications`: folder of `<SURVEY>/pubs/*.pdf` (default `<root>/../publications` or `<root>/publications`).
 * @returns the suite. Blocks whose survey has no data files are `runnable: false` with the reason.
 *   Bad rows (malformed CSV, unknown answer structure, non-numeric answer) are skipped and reported as
 *   `benchmark.csv:LINE column C: ...` in the block's and the suite's problems.
 * @throws LoupeInputError when the root is not LongDA, or benchmark.csv is unreadable / not UTF-8 / lacks columns.
 */
export function loadLongda(root: string, opts: LoadSuiteOptions = {}): Suite {
  const log = opts.log ?? nullLogger;
  const dir = resolveLongdaRoot(root);
  const csvFile = join(dir, 'benchmark.csv');
  const csv = readLongdaCsv(csvFile);
  const suiteProblems: string[] = csv.problems;
  const stamp = readFetchStamp(dir) ?? readFetchStamp(dirname(dir));
  const suiteId = `longda:${safeId(basename(dir) === 'benchmark' ? basename(dirname(dir)) : basename(dir))}`;

  const pubRoot = findPublications(dir, opts.publications);
  const pubMap = loadPublicationMap();
  const missingRefs = readMissingList(dir);

  const surveyCache = new Map<
    string,
    { data: VisibleFile[]; docs: VisibleFile[]; problems: string[]; runnable: boolean }
  >();
  const blocks: Block[] = [];
  for (const g of csv.blocks) {
    const { id } = g;
    const problems = [...g.problems];
    // the non-strict reader skips rows whose structure it refuses: every item holds a parsed structure
    const items = g.queries.filter((q): q is LongdaQuery => q.answerStructure.kind !== 'invalid');
    const answers: Record<string, number | number[] | null> = {};
    for (const q of items) answers[q.id] = q.groundTruth;

    let survey = surveyCache.get(g.survey);
    if (!survey) surveyCache.set(g.survey, (survey = listSurvey(dir, g.survey)));
    problems.push(...survey.problems);
    const missing = missingRefs.filter((m) => m.startsWith(`${g.survey}/`)).map((m) => m.slice(g.survey.length + 1));
    if (missing.length) {
      problems.push(
        `${missing.length} referenced file(s) absent: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', ...' : ''}`,
      );
    }
    if (items.length === 0) problems.push('no usable queries');

    // Publications: the configured / sibling publications folder, plus `<SURVEY>/pubs/` when a
    // download kept them inside the survey folder (never listed as data or docs).
    const pubs = [
      ...new Set([
        ...(pubRoot ? listFilesRecursive(join(pubRoot, g.survey)) : []),
        ...listFilesRecursive(join(dir, g.survey, 'pubs')),
      ]),
    ];
    const publication = pickPublication(g.survey, g.source, pubs, pubMap, csv.blocks);
    const hiddenFiles = [csvFile, ...pubs];
    for (const extra of ['DATASET_CARD.md']) if (isFile(join(dir, extra))) hiddenFiles.push(join(dir, extra));
    blocks.push({
      id,
      suite: 'longda',
      suiteId,
      title: `${g.survey}: ${g.source}`,
      items,
      visible: { data: survey.data, docs: survey.docs, missing },
      hidden: { files: hiddenFiles, answers, publications: pubs, ...(publication ? { publication } : {}) },
      runnable: survey.runnable && items.length > 0,
      problems,
      longda: { survey: g.survey, source: g.source },
    });
  }
  if (blocks.length === 0) suiteProblems.push(`${csvFile}: no blocks (no usable rows)`);
  log.info(
    `LongDA: ${blocks.length} blocks, ${blocks.reduce((n, b) => n + b.items.length, 0)} queries from ${csvFile}`,
  );
  return {
    id: suiteId,
    kind: 'longda',
    title: 'LongDA',
    version: stamp?.revision ?? 'unknown',
    root: dir,
    source: {
      kind: stamp ? 'fetched' : 'local',
      root: dir,
      upstream: 'https://huggingface.co/datasets/EvilBench/LongDA',
      ...(stamp?.revision ? { revision: stamp.revision } : {}),
    },
    blocks,
    problems: suiteProblems,
  };
}

/**
 * Gives each record the CSV reader dropped (malformed / not UTF-8; reported in `csvProblems` as
 * `FILE:LINE: ...`) to its block: by its own `survey,source` fields read leniently from its first
 * line, else by its neighbours when the good rows before and after it are of the same block.
 * @returns per block key (`survey\0source`), the sorted start lines of all its records (kept and dropped).
 */
function assignDroppedRecords(
  csvFile: string,
  csvProblems: string[],
  rows: { cells: Record<string, string>; line: number }[],
  groups: Map<string, { survey: string; source: string; rows: { line: number }[] }>,
  suiteProblems: string[],
  text?: string,
): Map<string, number[]> {
  const slots = new Map<string, number[]>();
  const dropped = new Set<number>();
  for (const p of csvProblems) {
    if (!p.startsWith(`${csvFile}:`)) continue;
    const m = /^(\d+): (?:malformed CSV record|not valid UTF-8)/.exec(p.slice(csvFile.length + 1));
    if (m) dropped.add(Number(m[1]));
  }
  // The reader gives a row that follows a record it skipped the skipped record's start line; the row
  // itself starts after it (after a run of skipped records).
  for (const r of rows) while (dropped.has(r.line)) r.line++;
  for (const [key, g] of groups) {
    slots.set(
      key,
      g.rows.map((r) => r.line),
    );
  }
  if (dropped.size === 0) return slots;
  let lines: string[] = [];
  try {
    lines = (
      text ??
      readFileSync(csvFile)
        .toString('utf8')
        .replace(/^\uFEFF/, '')
    ).split('\n');
  } catch {
    // Already read once by parseCsvFile; if it vanished since, fall back to neighbours only.
  }
  const keyed = rows
    .map((r) => ({ line: r.line, key: `${(r.cells.survey ?? '').trim()}\u0000${(r.cells.source ?? '').trim()}` }))
    .filter((r) => groups.has(r.key));
  for (const line of [...dropped].sort((a, b) => a - b)) {
    let key: string | undefined;
    const text = lines[line - 1];
    if (text !== undefined) {
      try {
        const rec = (
          parseCsv(text, { relax_quotes: true, relax_column_count: true, skip_empty_lines: true }) as string[][]
        )[0];
        const k = rec && rec.length >= 2 ? `${rec[0]!.trim()}\u0000${rec[1]!.trim()}` : '';
        if (groups.has(k)) key = k;
      } catch {
        // Not even leniently readable: decide by the neighbours.
      }
    }
    if (key === undefined) {
      const before = keyed.filter((r) => r.line < line).at(-1);
      const after = keyed.find((r) => r.line > line);
      if (before && after && before.key === after.key) key = before.key;
    }
    if (key === undefined) {
      suiteProblems.push(
        `${csvFile}:${line}: cannot tell which block the skipped record belongs to; question ids after it may differ from LongTA's`,
      );
      continue;
    }
    slots.get(key)!.push(line);
  }
  for (const l of slots.values()) l.sort((a, b) => a - b);
  return slots;
}

function listSurvey(
  dir: string,
  survey: string,
): { data: VisibleFile[]; docs: VisibleFile[]; problems: string[]; runnable: boolean } {
  let sdir = join(dir, survey);
  const problems: string[] = [];
  if (!isDir(sdir)) {
    // Tolerate a folder whose name differs only in case (e.g. `nhanes/` for survey NHANES).
    const alt = readdirSync(dir).find((n) => n.toLowerCase() === survey.toLowerCase() && isDir(join(dir, n)));
    if (alt) sdir = join(dir, alt);
  }
  if (!isDir(sdir)) {
    return { data: [], docs: [], problems: [`survey folder ${sdir} is missing: not runnable`], runnable: false };
  }
  // `data` / `docs` folders, tolerating a different case (`Data/`); workspace paths keep the real name.
  const sub = (name: string) =>
    join(sdir, readdirSync(sdir).find((n) => n.toLowerCase() === name && isDir(join(sdir, n))) ?? name);
  const dataDir = sub('data');
  const docsDir = sub('docs');
  const toVisible = (files: string[]) =>
    files.map((p) => ({ path: p, rel: posixRelative(sdir, p), size: fileSize(p) }));
  const data = toVisible(listFilesRecursive(dataDir));
  const docs = toVisible(listFilesRecursive(docsDir));
  if (data.length === 0) {
    problems.push(`${dataDir} is ${isDir(dataDir) ? 'empty' : 'missing'}: no data files, not runnable`);
  }
  if (docs.length === 0) problems.push(`${docsDir} is ${isDir(docsDir) ? 'empty' : 'missing'}: no documentation`);
  return { data, docs, problems, runnable: data.length > 0 };
}

function findPublications(dir: string, configured?: string): string | undefined {
  if (configured) {
    const p = resolve(configured);
    if (!isDir(p)) throw new LoupeInputError(p, 'publications folder does not exist');
    return p;
  }
  for (const c of [join(dirname(dir), 'publications'), join(dir, 'publications')]) if (isDir(c)) return c;
  return undefined;
}

function readMissingList(dir: string): string[] {
  for (const f of [join(dir, 'MISSING_FROM_SNAPSHOT.txt'), join(dirname(dir), 'MISSING_FROM_SNAPSHOT.txt')]) {
    if (!isFile(f)) continue;
    return readFileSync(f, 'utf8')
      .split(/\r?\n/)
      .map((l) => l.replace(/^MISSING\s+/, '').trim())
      .filter(Boolean)
      .map((l) => l.replace(/^benchmark\//, ''));
  }
  return [];
}

type PubMap = Record<string, Record<string, string>>;
function loadPublicationMap(): PubMap {
  return Object.fromEntries(
    Object.entries(publicationMap as Record<string, unknown>).filter(
      ([k, v]) => !k.startsWith('$') && typeof v === 'object' && v !== null,
    ),
  ) as PubMap;
}

/**
 * Picks the publication a block was extracted from: known map, then a number in the source
 * title matching the file name (`No. 520` ↔ `db520.pdf`, `NSF 25-316` ↔ `nsf25316.pdf`), then the
 * title itself, then the only publication of a single-block survey.
 */
function pickPublication(
  survey: string,
  source: string,
  pubs: string[],
  map: PubMap,
  groups: ReadonlyArray<{ survey: string }>,
): string | undefined {
  if (pubs.length === 0) return undefined;
  const mapped = map[survey]?.[source];
  if (mapped) {
    const hit = pubs.find((p) => basename(p) === mapped);
    if (hit) return hit;
  }
  const norm = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, '');
  const nums = source.match(/\d+(?:-\d+)?/g) ?? [];
  for (const n of nums) {
    const key = n.replace('-', '');
    if (key.length < 3) continue;
    const hit = pubs.find((p) => new RegExp(`(^|[^0-9])${key}([^0-9]|$)`).test(basename(p).replace(/-/g, '')));
    if (hit) return hit;
  }
  const byTitle = pubs.find((p) => norm(basename(p).replace(/\.[^.]+$/, '')) === norm(source));
  if (byTitle) return byTitle;
  const surveyBlocks = groups.filter((g) => g.survey === survey).length;
  if (surveyBlocks === 1 && pubs.length === 1) return pubs[0];
  return undefined;
}
