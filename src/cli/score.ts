import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { aggregateScores, assistedModel, saveRunScore, scoreStoredRun, scoringSession, validateOptionNames, type RunScore, type ScoreAggregate } from '../core/runs/score-stored-run.ts';
import { presetOf } from '../core/eval/run-score.ts';
import { RecordedJudge } from '../core/eval/judges/recorded.ts';
import { MemoryJudgementStore } from '../core/eval/judges/judge.ts';
import { ddrOptions, scoreDdrChecklists } from '../core/benchmarks/ddr/eval.ts';
import { readDdrLogFolder } from '../core/benchmarks/ddr/official-logs.ts';
import { benchmarks, findBenchmark, getBenchmark } from '../core/benchmarks/registry.ts';
import { formatOptionEcho, optionPresetHelpLines, parseOptionsWithPreset, parsePreset, SCORE_PRESETS, splitOptionPairs, type ScorePreset } from '../core/benchmarks/options.ts';
import { loadLongdaGroundTruth, longdaOptions, parseLongtaAnswers, scoreLongda } from '../core/benchmarks/longda/eval.ts';
import { LoupeInputError } from '../core/util/errors.ts';
import { createJudge, JUDGE_KINDS, type HumanResolver, type Judge, type JudgeKind, type JudgementStore } from '../core/eval/judges/index.ts';
import { annotationStoreOf, humanResolver } from '../core/annotations/index.ts';
import { lexicalEmbedder, openAiEmbedder, type CaptionEmbedder } from '../core/benchmarks/analystbench/eval.ts';
import { judgementStoreOf } from '../core/eval/store.ts';
import { openStoreAt } from '../core/store/open.ts';
import { openExistingStore, runsRootOf, storeName } from './store-arg.ts';
import type { LoadSuiteOptions, Suite } from '../core/suites/types.ts';
import { streamLogger } from '../core/util/log.ts';
import { UsageError, type CliCommand, type CliIo } from './types.ts';
import { oneLine } from '../core/util/text-safety.ts';

const USAGE_HEAD = `loupe score [--store FILE] (--run ID | --all) [--suite S] [--suite-root DIR | --root DIR]
            [--entities TABLE.COLUMN --database FILE --metadata DIR --checklist FILE]  (DDR: as given to loupe run)
            [--checklist-version latest|native|N] [--gt-version latest|shipped|N]
            [--judge none|llm|human|llm+human] [--judge-model M --judge-base-url URL --judge-api-key-env VAR]
            [--embeddings-model M [--embeddings-base-url URL]] [--preset official|paper] [--option name=value ...]
            [--no-save] [--json]
  --preset official (default): every option takes the value that reproduces the benchmark's own published code
    (numbers compare with the published tables, its known bugs included and counted in each score's changedBy);
    --preset paper: the paper's text where it differs from the code. --option name=value overrides the preset.
    Every score records its preset and resolved options; scores saved before presets existed read as 'legacy'.
  --judge none (default): only identical-text shortcuts are decided; items that need judgement stay unjudged.
  --judge llm: an OpenAI-compatible endpoint (temperature 0, JSON verdicts, cached in the store by prompt hash).
  --judge human: the experts' verdicts from the annotation panel (adjudicated, else majority, else the single
    annotator; ties stay pending); other items wait as pending; scores say how many are pending.
  --judge llm+human: experts' verdicts where they exist, the LLM judge elsewhere (needs the --judge-model flags).
  --judge file:VERDICTS.jsonl: recorded verdicts, one JSON object a line keyed by the benchmark's own ids —
    {"task": "checklist-support", "id": {"entity": "1001", "item": 0, "context": "message-wise"}, "raw": "<reply>"}
    (DDR: entity + checklist item index + context; AnalystBench: {"task": ID, "criterion": index}); "verdict": {...}
    in Loupe's shape instead of "raw" also works. No model is called; an item with no line is a failed judgement.
  Every score says how many judgements experts, the LLM and identical-text shortcuts decided, and how many wait.
  --gt-version: BLADE ground truth — latest (default: the newest version saved with loupe blade gt save, else the
    dataset's annotations.csv), shipped (the file, version 0) or a version number; every score records it.
  --checklist-version: DDR / AnalystBench block checklists — latest (default: the newest version written with
    \`loupe checklist\` or the checklist editor, else the suite's own), native (the suite's own), or a version number.
    Every score records which checklist it used (source, version, hash).
  options (--option name=value; see below)
  --json prints { judge, options, runs: [...], aggregates: [...] }; rates are fractions in [0, 1].
  Scores are saved in the store (table scores) unless --no-save.
       loupe score --longda-answers answers_progress.csv [--ground-truth benchmark.csv] [--preset P] [--option ...] [--json]
  scores a LongTA results file (or any CSV with the benchmark columns plus my_answer and q_id) without a store.
       loupe score --ddr-logs LOGS_DIR --qa qa.json [--scenario mimic|10k|globem] --judge file:VERDICTS.jsonl
            [--preset P] [--option ...] [--json]
  scores DDR-Bench's own agent logs (<prefix>_<entity>/insights*.csv, session_stats*.json) against its qa.json,
  without a store (the judge: file:, or llm with the --judge-model flags).
       loupe score --blade-outputs FILE|DIR [--blade-outputs ...] --root BLADE_DATASETS [--judge file:VERDICTS.jsonl]
            [--preset P] [--option ...] [--json]
  scores BLADE's own outputs (multirun_analyses.json as its harness writes it per dataset, or a submission file with
  dataset_name + analyses) against the ground truth in BLADE_DATASETS/<dataset> (data.csv, annotations.csv), without
  a store. Recorded verdicts are keyed {"dataset", "run" (the analysis key in the file), "kind"
  (conceptual-variable | model), "truth", "submitted"}; without --judge only identical texts match.`;

/** The usage text: the scoring options come from each benchmark's declaration. */
function usage(): string {
  const opts = benchmarks().filter((b) => b.scoreOptions.length).flatMap((b) => [`  ${b.title} (--suite ${b.kind}):`, ...optionPresetHelpLines(b.scoreOptions, 4)]);
  return `${USAGE_HEAD}\n  scoring options (values under --preset ${SCORE_PRESETS.join(' / ')}):\n${opts.join('\n')}`;
}

/** Parses repeated `--option name=value`. @throws LoupeInputError('--option') for a pair without a name. */
export function parseOptionPairs(pairs: readonly string[] | undefined): Record<string, string> {
  return splitOptionPairs(pairs, '--option');
}

/** DDR loader options given on the command line (the same flags as `loupe run`). */
export function loadOptionsFromArgs(v: { entities?: string | undefined; database?: string | undefined; metadata?: string | undefined; checklist?: string | undefined }, cwd: string): Omit<LoadSuiteOptions, 'log' | 'onProgress'> {
  return {
    ...(v.entities ? { entities: v.entities } : {}),
    ...(v.database ? { database: resolve(cwd, v.database) } : {}),
    ...(v.metadata ? { metadataDir: resolve(cwd, v.metadata) } : {}),
    ...(v.checklist ? { checklist: resolve(cwd, v.checklist) } : {}),
  };
}

/**
 * Builds the judge chosen on the command line (the core factory; messages in the CLI's flags); `file:PATH` is the
 * recorded-verdicts judge (PATH relative to `cwd`).
 */
export function judgeFromArgs(v: { judge?: string; 'judge-model'?: string; 'judge-base-url'?: string; 'judge-api-key-env'?: string }, store: JudgementStore, env: NodeJS.ProcessEnv, resolver?: HumanResolver, cwd = process.cwd()): Judge {
  const kind = v.judge ?? 'none';
  if (kind.startsWith('file:')) {
    if (kind.length === 5) throw new UsageError('--judge file: needs a path, e.g. --judge file:verdicts.jsonl');
    return new RecordedJudge(resolve(cwd, kind.slice(5)));
  }
  if (!(JUDGE_KINDS as readonly string[]).includes(kind)) throw new UsageError(`--judge must be ${JUDGE_KINDS.join(', ')} or file:VERDICTS.jsonl, got '${kind}'`);
  if ((kind === 'llm' || kind === 'llm+human') && (!v['judge-model'] || !v['judge-base-url'])) throw new UsageError(`--judge ${kind} needs --judge-model and --judge-base-url`);
  return createJudge({ kind: kind as JudgeKind, ...(v['judge-model'] ? { model: v['judge-model'] } : {}), ...(v['judge-base-url'] ? { baseUrl: v['judge-base-url'] } : {}), apiKey: env[v['judge-api-key-env'] ?? 'OPENAI_API_KEY'] ?? '' }, store, resolver ?? (async () => undefined));
}

const pct = (x: number | null | undefined) => (x === null || x === undefined ? '—' : (100 * x).toFixed(2));
const num = (x: number | null | undefined, d = 2) => (x === null || x === undefined ? '—' : x.toFixed(d));

/** One text line per run: id, block, model, then the benchmark's own summary. */
export function runLine(s: RunScore): string {
  const a = s.assistance;
  const help = a?.label ? `  [${a.label}: ${a.interventions} intervention${a.interventions === 1 ? '' : 's'}${a.forkOf ? `, forked from ${a.forkOf.runId}@${a.forkOf.step}` : ''}${a.untilSolved !== undefined ? `, solved after ${a.untilSolved ?? '— (never)'}` : ''}]` : '';
  const head = `${s.runId}  ${s.suite}/${oneLine(s.blockId)}  ${oneLine(assistedModel(s.model, a?.label))}${help}`;
  if (s.error) return `${head}  ERROR: ${oneLine(s.error, 500)}`;
  const def = findBenchmark(s.benchmark);
  const d = s.decided;
  const decided = d && (d.human || (d.llm && s.judgeId.includes('human'))) ? `  decided: human ${d.human} · llm ${d.llm} · pending ${d.pending}` : '';
  return (def ? `${head}  ${def.scoreLine(s)}` : head) + decided;
}

/** Aggregate lines. */
export function aggregateLines(aggs: readonly ScoreAggregate[]): string[] {
  const out: string[] = [];
  for (const a of aggs) {
    const ms = Object.entries(a.metrics).map(([k, v]) => `${k}=${v === null ? '—' : Number.isInteger(v) ? v : v.toFixed(4)}`).join('  ');
    out.push(`${a.benchmark}  ${oneLine(a.model)}  runs ${a.runs}${a.failed ? ` (${a.failed} failed)` : ''}${a.pending ? `  pending ${a.pending}` : ''}\n    ${ms}\n    (${a.method})`);
  }
  return out;
}

/** Scores runs of a store; shared by `loupe score` and `loupe report`. */
export async function scoreRuns(opts: { storeFile: string; runsRoot: string | null; runIds?: string[]; suite?: string; suiteRoot?: string; loadOptions?: Omit<LoadSuiteOptions, 'log' | 'onProgress'>; judge: (js: JudgementStore, resolver: HumanResolver) => Judge; options: Record<string, string>; preset?: ScorePreset; embedder?: CaptionEmbedder; save: boolean; io?: CliIo; checklist?: 'latest' | 'native' | number; groundTruth?: 'latest' | 'shipped' | number }): Promise<{ judgeId: string; runs: RunScore[]; aggregates: ScoreAggregate[] }> {
  const store = await openStoreAt(opts.storeFile, { ...(opts.io ? { cwd: opts.io.cwd, env: opts.io.env } : {}) });
  const session = scoringSession();
  try {
    const js = judgementStoreOf(store);
    const judge = opts.judge(js, humanResolver(annotationStoreOf(store)));
    const ids = opts.runIds ?? (await store.listRuns(opts.suite ? { suite: opts.suite } : {})).map((r) => r.id).reverse();
    const suites = new Map<string, Promise<Suite>>();
    const log = opts.io ? streamLogger({ write: (s: string) => opts.io!.err(s) }, 'warn') : undefined;
    const runs: RunScore[] = [];
    for (const id of ids) {
      const s = await scoreStoredRun(store, id, { judge, options: opts.options, runsRoot: opts.runsRoot, ...(opts.preset ? { preset: opts.preset } : {}), suites, ...(opts.loadOptions ? { loadOptions: opts.loadOptions } : {}), ...(opts.suiteRoot ? { suiteRoot: opts.suiteRoot } : {}), ...(opts.embedder ? { embedder: opts.embedder } : {}), ...(log ? { log } : {}), ...(opts.checklist !== undefined ? { checklist: opts.checklist } : {}), ...(opts.groundTruth !== undefined ? { groundTruth: opts.groundTruth } : {}) }, session);
      runs.push(s);
      if (opts.save) await saveRunScore(store, s);
    }
    const aggregates = await aggregateScores(runs, judge, opts.options, opts.preset);
    return { judgeId: judge.id, runs, aggregates };
  } finally {
    await session.close();
    await store.close();
  }
}

export const scoreCommand: CliCommand = {
  name: 'score',
  summary: 'score recorded runs the way their benchmark does (LongDA, DDR-Bench, AnalystBench, BLADE), with a judge of your choice',
  get usage() {
    return usage();
  },
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv,
      options: {
        store: { type: 'string' }, run: { type: 'string', multiple: true }, all: { type: 'boolean' }, suite: { type: 'string' }, 'suite-root': { type: 'string' }, root: { type: 'string' },
        judge: { type: 'string' }, 'judge-model': { type: 'string' }, 'judge-base-url': { type: 'string' }, 'judge-api-key-env': { type: 'string' },
        'embeddings-model': { type: 'string' }, 'embeddings-base-url': { type: 'string' },
        entities: { type: 'string' }, database: { type: 'string' }, metadata: { type: 'string' }, checklist: { type: 'string' }, 'checklist-version': { type: 'string' }, 'gt-version': { type: 'string' },
        option: { type: 'string', multiple: true }, preset: { type: 'string' }, 'no-save': { type: 'boolean' }, json: { type: 'boolean' },
        'longda-answers': { type: 'string' }, 'ground-truth': { type: 'string' },
        'ddr-logs': { type: 'string' }, qa: { type: 'string' }, scenario: { type: 'string' },
        'blade-outputs': { type: 'string', multiple: true },
      },
    });
    const preset = parsePreset(values.preset, '--preset');
    if (values['ddr-logs']) {
      if (!values.qa) throw new UsageError('--ddr-logs needs --qa FILE (the scenario\'s qa.json)');
      const judgeArgs = { judge: values.judge, 'judge-model': values['judge-model'], 'judge-base-url': values['judge-base-url'], 'judge-api-key-env': values['judge-api-key-env'] };
      return scoreDdrLogs({ logs: values['ddr-logs'], qa: values.qa, scenario: values.scenario ?? 'mimic', judge: judgeFromArgs(judgeArgs, new MemoryJudgementStore(), io.env, undefined, io.cwd), options: parseOptionPairs(values.option), preset, json: !!values.json }, io);
    }
    if (values['blade-outputs']?.length) {
      const root = values.root ?? values['suite-root'];
      if (!root) throw new UsageError('--blade-outputs needs --root DIR (the BLADE datasets folder with <dataset>/annotations.csv)');
      const judgeArgs = { judge: values.judge ?? 'none', 'judge-model': values['judge-model'], 'judge-base-url': values['judge-base-url'], 'judge-api-key-env': values['judge-api-key-env'] };
      return scoreBladeOutputFiles({ files: values['blade-outputs'].map((f) => resolve(io.cwd, f)), root: resolve(io.cwd, root), judge: judgeFromArgs(judgeArgs, new MemoryJudgementStore(), io.env, undefined, io.cwd), options: parseOptionPairs(values.option), preset, json: !!values.json }, io);
    }
    if (values['longda-answers']) return scoreLongtaFile(values['longda-answers'], values['ground-truth'], parseOptionPairs(values.option), preset, !!values.json, io);
    await (await openExistingStore(io, values.store)).close(); // a mistyped path is an error, not a new empty store
    if (!values.run?.length && !values.all) throw new UsageError('give --run ID (repeatable) or --all');
    if (values.run?.length && values.all) throw new UsageError('--run and --all are exclusive');
    const options = parseOptionPairs(values.option);
    validateOptionNames(options);
    const gv = values['gt-version'];
    if (gv !== undefined && !/^(latest|shipped|\d+)$/.test(gv)) throw new UsageError(`--gt-version must be latest, shipped or a version number, got '${gv}'`);
    const cv = values['checklist-version'];
    if (cv !== undefined && !/^(latest|native|[1-9]\d*)$/.test(cv)) throw new UsageError(`--checklist-version must be latest, native or a version number, got '${cv}'`);
    const judgeArgs = { judge: values.judge, 'judge-model': values['judge-model'], 'judge-base-url': values['judge-base-url'], 'judge-api-key-env': values['judge-api-key-env'] };
    judgeFromArgs(judgeArgs, { get: async () => undefined, put: async () => {}, listPending: async () => [] }, io.env, undefined, io.cwd); // validate early
    const embedder = values['embeddings-model']
      ? openAiEmbedder({ baseUrl: values['embeddings-base-url'] ?? values['judge-base-url'] ?? '', model: values['embeddings-model'], apiKey: io.env[values['judge-api-key-env'] ?? 'OPENAI_API_KEY'] ?? '' })
      : lexicalEmbedder();
    const res = await scoreRuns({
      storeFile: storeName(io, values.store),
      runsRoot: runsRootOf(io, values.store),
      ...(values.run?.length ? { runIds: values.run } : {}),
      ...(values.suite ? { suite: values.suite } : {}),
      ...(values['suite-root'] ?? values.root ? { suiteRoot: resolve(io.cwd, (values['suite-root'] ?? values.root)!) } : {}),
      loadOptions: loadOptionsFromArgs(values, io.cwd),
      judge: (js, resolver) => judgeFromArgs(judgeArgs, js, io.env, resolver, io.cwd),
      options,
      preset,
      embedder,
      save: !values['no-save'],
      io,
      ...(cv !== undefined ? { checklist: /^\d+$/.test(cv) ? Number(cv) : (cv as 'latest' | 'native') } : {}),
      ...(gv !== undefined ? { groundTruth: gv === '0' ? 'shipped' as const : /^\d+$/.test(gv) ? Number(gv) : (gv as 'latest' | 'shipped') } : {}),
    });
    if (values.json) {
      io.out(JSON.stringify({ judge: res.judgeId, preset, options, runs: res.runs.map(jsonRun), aggregates: res.aggregates }, jsonNumbers, 2) + '\n');
    } else {
      io.out(`judge: ${res.judgeId}   preset: ${preset}${Object.keys(options).length ? `   options: ${Object.entries(options).map(([k, v]) => `${k}=${v}`).join(' ')}` : ''}\n`);
      for (const s of res.runs) io.out(runLine(s) + '\n');
      const used = new Map(res.runs.filter((s) => !s.error).map((s) => [s.benchmark, s.options]));
      for (const [b, o] of used) io.out(`options used (${b}): ${formatOptionEcho(o)}\n`);
      // which tools and retrieval the agents had, when a run was made with other than the default tool options
      const tools = [...new Set(res.runs.filter((s) => !s.error && s.toolOptions && !defaultToolOptions(s)).map((s) => `${s.benchmark}: ${formatOptionEcho(s.toolOptions!)}`))];
      for (const t of tools) io.out(`tool options of runs (${t})\n`);
      const changed = changedTotals(res.runs, res.aggregates);
      if (changed) io.out(`changed by official-code options: ${changed}\n`);
      const lists = [...new Set(res.runs.filter((s) => s.checklist).map((s) => (s.checklist!.source === 'authored' ? `version ${s.checklist!.version}` : 'native')))];
      if (lists.length) io.out(`checklists used: ${lists.join(', ')}\n`);
      io.out('\n' + aggregateLines(res.aggregates).join('\n') + '\n');
    }
    return res.runs.some((s) => s.error) ? 1 : 0;
  },
};

/** `loupe score --longda-answers FILE`: scores a LongTA results file against its own or the given ground truth. */
async function scoreLongtaFile(file: string, truthFile: string | undefined, options: Record<string, string>, preset: ScorePreset, json: boolean, io: CliIo): Promise<number> {
  const longda = getBenchmark('longda');
  for (const k of Object.keys(options)) if (!longda.scoreOptions.some((o) => o.name === k)) throw new LoupeInputError(`option ${k}`, `not a LongDA option (${longda.scoreOptions.map((o) => o.name).join(', ')})`);
  const path = resolve(io.cwd, file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new LoupeInputError(path, 'cannot read the answers file', { cause: e });
  }
  const truth = truthFile ? loadLongdaGroundTruth(resolve(io.cwd, truthFile)) : undefined;
  const { queries, answers } = parseLongtaAnswers(text, path, truth);
  const opts = longdaOptions(parseOptionsWithPreset(longda.scoreOptions, preset, options) as Record<string, string | number>);
  const score = scoreLongda(queries, answers, opts);
  if (json) {
    const { rows, ...rest } = score;
    io.out(JSON.stringify({ file: path, groundTruth: truthFile ? resolve(io.cwd, truthFile) : 'the file\'s answer column', preset, ...rest, queries: rows }, jsonNumbers, 2) + '\n');
  } else {
    io.out(`${path}: ${score.n} queries, ${score.answered} answered\n`);
    io.out(`match ${pct(score.match)}%  coverage ${pct(score.coverage)}%  (strict ${pct(score.matchStrict)}%, structural coverage ${pct(score.coverageStructural)}%)  MAE ${num(score.mae, 3)}\n`);
    io.out(`preset: ${preset}   options used (longda): ${Object.entries(score.options).map(([k, v]) => `${k}=${v}`).join(' ')}\n`);
    if (score.changedBy && Object.keys(score.changedBy).length) io.out(`changed by official-code options: ${Object.entries(score.changedBy).map(([k, v]) => `${k} ${v}`).join(', ')}\n`);
    for (const b of score.bySource) io.out(`  ${b.blockId}: match ${pct(b.match)}%  coverage ${pct(b.coverage)}%  (${b.n})\n`);
  }
  return 0;
}

/** `loupe score --ddr-logs DIR --qa FILE`: DDR-Bench's own logs scored against its checklist, without a store. */
async function scoreDdrLogs(o: { logs: string; qa: string; scenario: string; judge: Judge; options: Record<string, string>; preset: ScorePreset; json: boolean }, io: CliIo): Promise<number> {
  const def = getBenchmark('ddr');
  for (const k of Object.keys(o.options)) if (!def.scoreOptions.some((s) => s.name === k)) throw new LoupeInputError(`option ${k}`, `not a DDR-Bench option (${def.scoreOptions.map((s) => s.name).join(', ')})`);
  const opts = ddrOptions({ ...(parseOptionsWithPreset(def.scoreOptions, o.preset, o.options) as Record<string, string | number>), scenario: o.scenario });
  const { runs, missing } = readDdrLogFolder(resolve(io.cwd, o.logs), resolve(io.cwd, o.qa), o.scenario);
  const s = await scoreDdrChecklists(runs, o.judge, opts);
  const notRecorded = o.judge instanceof RecordedJudge ? o.judge.missing.length : 0;
  if (o.json) {
    io.out(JSON.stringify({ logs: resolve(io.cwd, o.logs), qa: resolve(io.cwd, o.qa), judge: o.judge.id, preset: o.preset, options: s.options, entities: runs.length, entitiesWithoutLogs: missing, notRecorded, messageWise: s.messageWise, trajectoryWise: s.trajectoryWise, topK: s.topK, changedBy: s.changedBy, perEntity: s.perEntity.map((e) => ({ entityId: e.entityId, messageWise: { included: e.messageWise.included, accuracy: e.messageWise.accuracy, labels: e.messageWise.items.map((i) => i.officialLabel ?? i.label) }, trajectoryWise: { included: e.trajectoryWise.included, accuracy: e.trajectoryWise.accuracy, labels: e.trajectoryWise.items.map((i) => i.officialLabel ?? i.label) } })) }, jsonNumbers, 2) + '\n');
  } else {
    io.out(`${resolve(io.cwd, o.logs)}: ${runs.length} entities scored${missing.length ? ` (${missing.length} in qa.json without logs)` : ''}   judge: ${o.judge.id}   preset: ${o.preset}\n`);
    for (const [name, a] of [['message-wise', s.messageWise], ['trajectory-wise', s.trajectoryWise]] as const) io.out(`${name}: sample-averaged ${pct(a.sampleAveraged)}%  item-averaged ${pct(a.itemAveraged)}%  (${a.entities} entities, ${a.items} items, ${a.errors} failed)\n`);
    io.out(`options used (ddr): ${formatOptionEcho(s.options as unknown as Record<string, unknown>)}\n`);
    if (Object.keys(s.changedBy).length) io.out(`changed by official-code options: ${Object.entries(s.changedBy).map(([k, v]) => `${k} ${v}`).join(', ')}\n`);
    if (notRecorded) io.out(`${notRecorded} items had no recorded verdict (failed judgements)\n`);
  }
  return 0;
}

/** `loupe score --blade-outputs FILE --root DIR`: BLADE's own output files scored against its ground truth, without a store. */
async function scoreBladeOutputFiles(o: { files: string[]; root: string; judge: Judge; options: Record<string, string>; preset: ScorePreset; json: boolean }, io: CliIo): Promise<number> {
  const def = getBenchmark('blade');
  for (const k of Object.keys(o.options)) if (!def.scoreOptions.some((s) => s.name === k)) throw new LoupeInputError(`option ${k}`, `not a BLADE option (${def.scoreOptions.map((s) => s.name).join(', ')})`);
  const options = parseOptionsWithPreset(def.scoreOptions, o.preset, o.options);
  const { scoreBladeOutputs } = await import('../core/benchmarks/blade/native.ts');
  const s = await scoreBladeOutputs({ files: o.files, datasetsRoot: o.root, judge: o.judge, options });
  const notRecorded = o.judge instanceof RecordedJudge ? o.judge.missing.length : 0;
  const a = s.aggregate;
  if (o.json) {
    io.out(JSON.stringify({ files: o.files, root: o.root, judge: o.judge.id, preset: o.preset, options: s.options, datasets: s.datasets, judged: s.judged, notRecorded, missingVerdicts: o.judge instanceof RecordedJudge ? o.judge.missing : [], runs: s.runs.map(({ score: _s, ...r }) => r), aggregate: a ? { point: a.point, bootstrap: a.bootstrap, options: a.options, changedBy: a.changedBy, warnings: a.warnings } : null }, jsonNumbers, 2) + '\n');
  } else {
    io.out(`${s.runs.length} BLADE analyses in ${s.datasets.length} datasets   judge: ${o.judge.id}   preset: ${o.preset}\n`);
    for (const d of s.datasets.filter((x) => x.error)) io.out(`  ${d.dataset}: not scored (${d.error})\n`);
    for (const r of s.runs) io.out(`  ${r.dataset} #${r.run}: ${r.status}${r.error ? ` (${r.error})` : ''}${r.status === 'ok' ? `  cvar ${pct(r.precision.cvar)}%  model ${pct(r.precision.model)}%  transform value ${pct(r.precision.transformValue)}%  graph ${pct(r.precision.transformGraph)}%` : ''}\n`);
    if (a) io.out(`weighted F1 ${num(a.point.weightedF1, 4)} (bootstrap ${num(a.bootstrap.weightedF1.mean, 4)}, 95% CI ${num(a.bootstrap.weightedF1.lo, 4)}–${num(a.bootstrap.weightedF1.hi, 4)})  unweighted F1 ${num(a.point.unweightedF1, 4)}\n`);
    io.out(`options used (blade): ${formatOptionEcho(s.options)}\n`);
    if (notRecorded) io.out(`${notRecorded} semantic matches had no recorded verdict (counted as no match)\n`);
  }
  return s.runs.some((r) => r.status === 'failed') ? 1 : 0;
}

/** The JSON shape of one run in `loupe score --json` (`decided`: who decided its judgements): LongDA adds `coverage`, `match` and per-query `queries`. */
/** Whether a score's run had its benchmark's default tool options. */
function defaultToolOptions(s: RunScore): boolean {
  const specs = findBenchmark(s.benchmark)?.toolOptions ?? [];
  return Object.entries(s.toolOptions ?? {}).every(([k, v]) => specs.find((o) => o.name === k)?.default === v);
}

export function jsonRun(s: RunScore): Record<string, unknown> {
  const out: Record<string, unknown> = { runId: s.runId, suite: s.suite, blockId: s.blockId, model: s.model, agent: s.agent, status: s.status, benchmark: s.benchmark, judge: s.judgeId, preset: presetOf(s), ...(s.changedBy ? { changedBy: s.changedBy } : {}), options: s.options, pending: s.pending, unjudged: s.unjudged, summary: s.summary };
  if (s.toolOptions) out.toolOptions = s.toolOptions;
  if (s.decided) out.decided = s.decided;
  if (s.assistance) out.assistance = s.assistance;
  if (s.checklist) out.checklist = s.checklist;
  if (s.groundTruth) out.groundTruth = s.groundTruth;
  if (s.error) out.error = s.error;
  if (!s.error) {
    const extra = findBenchmark(s.benchmark)?.scoreJson;
    if (extra) Object.assign(out, extra(s));
    else out.detail = s.detail;
  }
  return out;
}

/**
 * JSON.stringify replacer of `loupe score --json`: a non-finite number is written as the string `Infinity`,
 * `-Infinity` or `NaN` (the official codes' `inf` MAE and NaN F1 stay visible; JSON has no such numbers).
 */
export function jsonNumbers(_key: string, v: unknown): unknown {
  return typeof v === 'number' && !Number.isFinite(v) ? String(v) : v;
}

/** `option n, ...` over runs and aggregates: the items official-code options changed; '' when none. */
function changedTotals(runs: readonly RunScore[], aggs: readonly ScoreAggregate[]): string {
  const t = new Map<string, number>();
  for (const x of [...runs, ...aggs]) for (const [k, v] of Object.entries(x.changedBy ?? {})) t.set(k, (t.get(k) ?? 0) + v);
  return [...t].filter(([, v]) => v > 0).map(([k, v]) => `${k} ${v}`).join(', ');
}
