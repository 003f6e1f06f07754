import { resolve } from 'node:path';
import {
  aggregateScores,
  assistedModel,
  saveRunScore,
  scoreStoredRun,
  scoringSession,
  validateOptionNames,
  type RunScore,
  type ScoreAggregate,
} from '../core/runs/score-stored-run.ts';
import { presetOf } from '../core/eval/run-score.ts';
import { RecordedJudge } from '../core/eval/judges/recorded.ts';
import { MemoryJudgementStore } from '../core/eval/judges/judge.ts';
import { benchmarkOfFolder, benchmarks, findBenchmark, getBenchmark } from '../core/benchmarks/registry.ts';
import type { BenchmarkDefinition } from '../core/benchmarks/types.ts';
import {
  formatOptionEcho,
  optionPresetHelpLines,
  parsePreset,
  SCORE_PRESETS,
  splitOptionPairs,
  type ScorePreset,
} from '../core/benchmarks/options.ts';
import { LoupeInputError } from '../core/util/errors.ts';
import {
  createJudge,
  JUDGE_KINDS,
  type HumanResolver,
  type Judge,
  type JudgeKind,
  type JudgementStore,
} from '../core/eval/judges/index.ts';
import { annotationStoreOf, humanResolver } from '../core/annotations/index.ts';
import { lexicalEmbedder, openAiEmbedder, type CaptionEmbedder } from '../core/benchmarks/analystbench/eval.ts';
import { judgementStoreOf } from '../core/eval/store.ts';
import { openStoreAt } from '../core/store/open.ts';
import { openExistingStore, runsRootOf, STORE_OPTIONS, storeName } from './store-arg.ts';
import type { LoadSuiteOptions, Suite } from '../core/suites/types.ts';
import { streamLogger } from '../core/util/log.ts';
import { UsageError, type CliIo } from './types.ts';
import { oneLine } from '../core/util/text-safety.ts';
import {
  JSON_OPTIONS,
  JUDGE_OPTIONS,
  loaderOptionGroup,
  loaderOptionsFromArgs,
  SUITE_OPTIONS,
} from './option-groups.ts';
import {
  declareCommand,
  defineCommand,
  optionGroup,
  parseCommand,
  type CliOption,
  type OptionGroup,
} from './options.ts';

/** The native-output formats of the registered benchmarks: `--native-outputs` (with `--suite`), each format's alias and inputs. */
function nativeOutputGroup(): OptionGroup {
  const withFormat = benchmarks().filter((b) => b.importNativeOutputs);
  const options: Record<string, CliOption> = {
    'native-outputs': {
      type: 'string',
      multiple: true,
      value: 'PATH',
      help: `a benchmark's own output files, scored without a store (with --suite ${withFormat.map((b) => b.kind).join('|')}; see below)`,
    },
  };
  for (const b of withFormat) {
    const f = b.importNativeOutputs!;
    if (f.alias) {
      options[f.alias] = {
        type: 'string',
        ...(f.multiple ? { multiple: true } : {}),
        value: 'PATH',
        help: `the same as --native-outputs PATH --suite ${b.kind}`,
      };
    }
    for (const i of f.inputs) {
      const have = options[i.name];
      const help = `--suite ${b.kind}: ${i.help}${i.default !== undefined ? ` (default ${i.default})` : ''}`;
      options[i.name] = { type: 'string', value: i.value, help: have ? `${have.help}; ${help}` : help };
    }
  }
  return { title: 'native outputs (scored without a store)', options };
}

const DECL = declareCommand({
  synopsis: 'score',
  groups: [
    STORE_OPTIONS,
    optionGroup('runs', {
      run: { type: 'string', multiple: true, value: 'ID', help: 'a stored run scored (repeatable)' },
      all: { type: 'boolean', help: 'every stored run (of --suite when given)' },
    }),
    SUITE_OPTIONS,
    optionGroup('versions', {
      'suite-root': {
        type: 'string',
        value: 'DIR',
        help: 'the same as --root: where the suite is (default: the root recorded with each run)',
      },
      'checklist-version': {
        type: 'string',
        value: 'latest|native|N',
        help: "DDR / AnalystBench block checklists: latest (default: the newest version written with loupe checklist or the checklist editor, else the suite's own), native (the suite's own), or a version number; every score records which it used (source, version, hash)",
      },
      'gt-version': {
        type: 'string',
        value: 'latest|shipped|N',
        help: "BLADE ground truth: latest (default: the newest version saved with loupe blade gt save, else the dataset's annotations.csv), shipped (the file, version 0) or a version number; every score records it",
      },
    }),
    JUDGE_OPTIONS,
    optionGroup('embeddings', {
      'embeddings-model': {
        type: 'string',
        value: 'M',
        help: 'AnalystBench figure captions: an OpenAI-compatible embeddings model (default: lexical similarity)',
      },
      'embeddings-base-url': { type: 'string', value: 'URL', help: 'its endpoint (default --judge-base-url)' },
    }),
    optionGroup('scoring', {
      preset: {
        type: 'string',
        value: SCORE_PRESETS.join('|'),
        help: "official (default): the benchmark's own published code; paper: the paper's text where it differs",
      },
      option: {
        type: 'string',
        multiple: true,
        value: 'name=value',
        help: 'a scoring option of the benchmark (repeatable; overrides the preset; see below)',
      },
      'no-save': { type: 'boolean', help: 'do not save the scores in the store' },
    }),
    JSON_OPTIONS,
  ],
  dynamic: [loaderOptionGroup, nativeOutputGroup],
  notes: () => usageNotes(),
});

/** The notes of `loupe score --help`: native-output formats and scoring options come from the registry. */
function usageNotes(): string {
  const formats = benchmarks()
    .filter((b) => b.importNativeOutputs)
    .flatMap((b) => {
      const f = b.importNativeOutputs!;
      return [
        `  --native-outputs PATH${f.multiple ? ' ...' : ''} --suite ${b.kind}${f.alias ? ` (or --${f.alias} PATH)` : ''}${f.root ? ' --root DIR' : ''}${f.inputs
          .filter((i) => i.required)
          .map((i) => ` --${i.name} ${i.value}`)
          .join('')}:`,
        `    ${f.help}${f.root ? `; --root: ${f.root}` : ''}`,
      ];
    });
  const opts = benchmarks()
    .filter((b) => b.scoreOptions.length)
    .flatMap((b) => [`  ${b.title} (--suite ${b.kind}):`, ...optionPresetHelpLines(b.scoreOptions, 4)]);
  return `  Scores stored runs (--run ID ... or --all) and saves the scores in the store (table scores) unless --no-save.
  --preset official: every option takes the value that reproduces the benchmark's own published code (numbers
    compare with the published tables, its known bugs included and counted in each score's changedBy);
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
  --json prints { judge, options, runs: [...], aggregates: [...] }; rates are fractions in [0, 1].
  Native outputs (a benchmark's own result files, scored without a store; --preset, --option, --judge, --json apply):
${formats.join('\n')}
  scoring options (--option name=value; values under --preset ${SCORE_PRESETS.join(' / ')}):
${opts.join('\n')}`;
}

/** Parses repeated `--option name=value`. @throws LoupeInputError('--option') for a pair without a name. */
export function parseOptionPairs(pairs: readonly string[] | undefined): Record<string, string> {
  return splitOptionPairs(pairs, '--option');
}

/**
 * Builds the judge chosen on the command line (the core factory; messages in the CLI's flags); `file:PATH` is the
 * recorded-verdicts judge (PATH relative to `cwd`).
 */
export function judgeFromArgs(
  v: { judge?: string; 'judge-model'?: string; 'judge-base-url'?: string; 'judge-api-key-env'?: string },
  store: JudgementStore,
  env: NodeJS.ProcessEnv,
  resolver?: HumanResolver,
  cwd = process.cwd(),
): Judge {
  const kind = v.judge ?? 'none';
  if (kind.startsWith('file:')) {
    if (kind.length === 5) throw new UsageError('--judge file: needs a path, e.g. --judge file:verdicts.jsonl');
    return new RecordedJudge(resolve(cwd, kind.slice(5)));
  }
  if (!(JUDGE_KINDS as readonly string[]).includes(kind)) {
    throw new UsageError(`--judge must be ${JUDGE_KINDS.join(', ')} or file:VERDICTS.jsonl, got '${kind}'`);
  }
  if ((kind === 'llm' || kind === 'llm+human') && (!v['judge-model'] || !v['judge-base-url'])) {
    throw new UsageError(`--judge ${kind} needs --judge-model and --judge-base-url`);
  }
  return createJudge(
    {
      kind: kind as JudgeKind,
      ...(v['judge-model'] ? { model: v['judge-model'] } : {}),
      ...(v['judge-base-url'] ? { baseUrl: v['judge-base-url'] } : {}),
      apiKey: env[v['judge-api-key-env'] ?? 'OPENAI_API_KEY'] ?? '',
    },
    store,
    resolver ?? (async () => undefined),
  );
}

/** One text line per run: id, block, model, then the benchmark's own summary. */
export function runLine(s: RunScore): string {
  const a = s.assistance;
  const help = a?.label
    ? `  [${a.label}: ${a.interventions} intervention${a.interventions === 1 ? '' : 's'}${a.forkOf ? `, forked from ${a.forkOf.runId}@${a.forkOf.step}` : ''}${a.untilSolved !== undefined ? `, solved after ${a.untilSolved ?? '— (never)'}` : ''}]`
    : '';
  const head = `${s.runId}  ${s.suite}/${oneLine(s.blockId)}  ${oneLine(assistedModel(s.model, a?.label))}${help}`;
  if (s.error) return `${head}  ERROR: ${oneLine(s.error, 500)}`;
  const def = findBenchmark(s.benchmark);
  const d = s.decided;
  const decided =
    d && (d.human || (d.llm && s.judgeId.includes('human')))
      ? `  decided: human ${d.human} · llm ${d.llm} · pending ${d.pending}`
      : '';
  return (def ? `${head}  ${def.scoreLine(s)}` : head) + decided;
}

/** Aggregate lines. */
export function aggregateLines(aggs: readonly ScoreAggregate[]): string[] {
  const out: string[] = [];
  for (const a of aggs) {
    const ms = Object.entries(a.metrics)
      .map(([k, v]) => `${k}=${v === null ? '—' : Number.isInteger(v) ? v : v.toFixed(4)}`)
      .join('  ');
    out.push(
      `${a.benchmark}  ${oneLine(a.model)}  runs ${a.runs}${a.failed ? ` (${a.failed} failed)` : ''}${a.pending ? `  pending ${a.pending}` : ''}\n    ${ms}\n    (${a.method})`,
    );
  }
  return out;
}

/** Scores runs of a store; shared by `loupe score` and `loupe report`. */
export async function scoreRuns(opts: {
  storeFile: string;
  runsRoot: string | null;
  runIds?: string[];
  suite?: string;
  suiteRoot?: string;
  loadOptions?: Omit<LoadSuiteOptions, 'log' | 'onProgress'>;
  judge: (js: JudgementStore, resolver: HumanResolver) => Judge;
  options: Record<string, string>;
  preset?: ScorePreset;
  embedder?: CaptionEmbedder;
  save: boolean;
  io?: CliIo;
  checklist?: 'latest' | 'native' | number;
  groundTruth?: 'latest' | 'shipped' | number;
}): Promise<{ judgeId: string; runs: RunScore[]; aggregates: ScoreAggregate[] }> {
  const store = await openStoreAt(opts.storeFile, { ...(opts.io ? { cwd: opts.io.cwd, env: opts.io.env } : {}) });
  const session = scoringSession();
  try {
    const js = judgementStoreOf(store);
    const judge = opts.judge(js, humanResolver(annotationStoreOf(store)));
    const ids =
      opts.runIds ?? (await store.listRuns(opts.suite ? { suite: opts.suite } : {})).map((r) => r.id).reverse();
    const suites = new Map<string, Promise<Suite>>();
    const log = opts.io ? streamLogger({ write: (s: string) => opts.io!.err(s) }, 'warn') : undefined;
    const runs: RunScore[] = [];
    for (const id of ids) {
      const s = await scoreStoredRun(
        store,
        id,
        {
          judge,
          options: opts.options,
          runsRoot: opts.runsRoot,
          ...(opts.preset ? { preset: opts.preset } : {}),
          suites,
          ...(opts.loadOptions ? { loadOptions: opts.loadOptions } : {}),
          ...(opts.suiteRoot ? { suiteRoot: opts.suiteRoot } : {}),
          ...(opts.embedder ? { embedder: opts.embedder } : {}),
          ...(log ? { log } : {}),
          ...(opts.checklist !== undefined ? { checklist: opts.checklist } : {}),
          ...(opts.groundTruth !== undefined ? { groundTruth: opts.groundTruth } : {}),
        },
        session,
      );
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

export const scoreCommand = defineCommand({
  name: 'score',
  summary:
    'score recorded runs the way their benchmark does (LongDA, DDR-Bench, AnalystBench, BLADE), with a judge of your choice',
  declarations: [DECL],
  async run(argv, io) {
    const { values, extra } = parseCommand(DECL, argv);
    const preset = parsePreset(values.preset, '--preset');
    // issue 44: a --root folder holding a benchmark manifest registers its benchmark (and names the suite)
    const fromFolder = values.root ? benchmarkOfFolder(resolve(io.cwd, values.root)) : undefined;
    if (!values.suite && fromFolder) values.suite = fromFolder.kind;
    const native = nativeOutputsOf(extra, values.suite);
    if (native) {
      const judgeArgs = {
        judge: values.judge,
        'judge-model': values['judge-model'],
        'judge-base-url': values['judge-base-url'],
        'judge-api-key-env': values['judge-api-key-env'],
      };
      return scoreNativeOutputs(
        {
          ...native,
          root: values.root ?? values['suite-root'],
          extra,
          judge: () => judgeFromArgs(judgeArgs, new MemoryJudgementStore(), io.env, undefined, io.cwd),
          raw: parseOptionPairs(values.option),
          preset,
          json: !!values.json,
        },
        io,
      );
    }
    await (await openExistingStore(io, values.store)).close(); // a mistyped path is an error, not a new empty store
    if (!values.run?.length && !values.all) throw new UsageError('give --run ID (repeatable) or --all');
    if (values.run?.length && values.all) throw new UsageError('--run and --all are exclusive');
    const options = parseOptionPairs(values.option);
    validateOptionNames(options);
    const gv = values['gt-version'];
    if (gv !== undefined && !/^(latest|shipped|\d+)$/.test(gv)) {
      throw new UsageError(`--gt-version must be latest, shipped or a version number, got '${gv}'`);
    }
    const cv = values['checklist-version'];
    if (cv !== undefined && !/^(latest|native|[1-9]\d*)$/.test(cv)) {
      throw new UsageError(`--checklist-version must be latest, native or a version number, got '${cv}'`);
    }
    const judgeArgs = {
      judge: values.judge,
      'judge-model': values['judge-model'],
      'judge-base-url': values['judge-base-url'],
      'judge-api-key-env': values['judge-api-key-env'],
    };
    judgeFromArgs(
      judgeArgs,
      { get: async () => undefined, put: async () => {}, listPending: async () => [] },
      io.env,
      undefined,
      io.cwd,
    ); // validate early
    const embedder = values['embeddings-model']
      ? openAiEmbedder({
          baseUrl: values['embeddings-base-url'] ?? values['judge-base-url'] ?? '',
          model: values['embeddings-model'],
          apiKey: io.env[values['judge-api-key-env'] ?? 'OPENAI_API_KEY'] ?? '',
        })
      : lexicalEmbedder();
    const res = await scoreRuns({
      storeFile: storeName(io, values.store),
      runsRoot: runsRootOf(io, values.store),
      ...(values.run?.length ? { runIds: values.run } : {}),
      ...(values.suite ? { suite: values.suite } : {}),
      ...((values['suite-root'] ?? values.root)
        ? { suiteRoot: resolve(io.cwd, (values['suite-root'] ?? values.root)!) }
        : {}),
      loadOptions: loaderOptionsFromArgs(extra, io.cwd, values.suite ? findBenchmark(values.suite) : undefined),
      judge: (js, resolver) => judgeFromArgs(judgeArgs, js, io.env, resolver, io.cwd),
      options,
      preset,
      embedder,
      save: !values['no-save'],
      io,
      ...(cv !== undefined ? { checklist: /^\d+$/.test(cv) ? Number(cv) : (cv as 'latest' | 'native') } : {}),
      ...(gv !== undefined
        ? {
            groundTruth:
              gv === '0' ? ('shipped' as const) : /^\d+$/.test(gv) ? Number(gv) : (gv as 'latest' | 'shipped'),
          }
        : {}),
    });
    if (values.json) {
      io.out(
        JSON.stringify(
          { judge: res.judgeId, preset, options, runs: res.runs.map(jsonRun), aggregates: res.aggregates },
          jsonNumbers,
          2,
        ) + '\n',
      );
    } else {
      io.out(
        `judge: ${res.judgeId}   preset: ${preset}${
          Object.keys(options).length
            ? `   options: ${Object.entries(options)
                .map(([k, v]) => `${k}=${v}`)
                .join(' ')}`
            : ''
        }\n`,
      );
      for (const s of res.runs) io.out(runLine(s) + '\n');
      const used = new Map(res.runs.filter((s) => !s.error).map((s) => [s.benchmark, s.options]));
      for (const [b, o] of used) io.out(`options used (${b}): ${formatOptionEcho(o)}\n`);
      // which tools and retrieval the agents had, when a run was made with other than the default tool options
      const tools = [
        ...new Set(
          res.runs
            .filter((s) => !s.error && s.toolOptions && !defaultToolOptions(s))
            .map((s) => `${s.benchmark}: ${formatOptionEcho(s.toolOptions!)}`),
        ),
      ];
      for (const t of tools) io.out(`tool options of runs (${t})\n`);
      const changed = changedTotals(res.runs, res.aggregates);
      if (changed) io.out(`changed by official-code options: ${changed}\n`);
      const lists = [
        ...new Set(
          res.runs
            .filter((s) => s.checklist)
            .map((s) => (s.checklist!.source === 'authored' ? `version ${s.checklist!.version}` : 'native')),
        ),
      ];
      if (lists.length) io.out(`checklists used: ${lists.join(', ')}\n`);
      io.out('\n' + aggregateLines(res.aggregates).join('\n') + '\n');
    }
    return res.runs.some((s) => s.error) ? 1 : 0;
  },
});

/**
 * The native-output request on the command line: `--native-outputs PATH... --suite S`, or one of the formats' alias
 * flags (`--longda-answers`, ...); undefined when none is given.
 * @throws UsageError for --native-outputs without a suite that has a format, or several requests at once.
 */
function nativeOutputsOf(
  extra: Readonly<Record<string, unknown>>,
  suite: string | undefined,
): { def: BenchmarkDefinition; flag: string; paths: string[] } | undefined {
  const given = (name: string): string[] => {
    const v = extra[name];
    return Array.isArray(v) ? (v as string[]) : typeof v === 'string' && v ? [v] : [];
  };
  const found: Array<{ def: BenchmarkDefinition; flag: string; paths: string[] }> = [];
  const formats = benchmarks().filter((b) => b.importNativeOutputs);
  if (given('native-outputs').length) {
    if (!suite) {
      throw new UsageError(
        `--native-outputs needs --suite S (the benchmark that wrote them: ${formats.map((b) => b.kind).join(', ')})`,
      );
    }
    const def = getBenchmark(suite);
    if (!def.importNativeOutputs) {
      throw new UsageError(
        `--native-outputs: ${def.title} has no native-output format (benchmarks with one: ${formats.map((b) => b.kind).join(', ')})`,
      );
    }
    found.push({ def, flag: 'native-outputs', paths: given('native-outputs') });
  }
  for (const def of formats) {
    const alias = def.importNativeOutputs!.alias;
    if (alias && given(alias).length) found.push({ def, flag: alias, paths: given(alias) });
  }
  if (found.length > 1) throw new UsageError(`give one of ${found.map((f) => `--${f.flag}`).join(', ')}`);
  return found[0];
}

/**
 * `loupe score --native-outputs PATH --suite S` (or a format's alias): a benchmark's own output files scored without a
 * store by its definition's `importNativeOutputs`. @returns the exit code (1 when the format says a part failed).
 */
async function scoreNativeOutputs(
  o: {
    def: BenchmarkDefinition;
    flag: string;
    paths: string[];
    root: string | undefined;
    extra: Readonly<Record<string, unknown>>;
    judge: () => Judge;
    raw: Record<string, string>;
    preset: ScorePreset;
    json: boolean;
  },
  io: CliIo,
): Promise<number> {
  const { def } = o;
  const f = def.importNativeOutputs!;
  if (!f.multiple && o.paths.length > 1) throw new UsageError(`--${o.flag} takes one PATH for --suite ${def.kind}`);
  const inputs: Record<string, string> = {};
  for (const i of f.inputs) {
    const v = o.extra[i.name];
    if (typeof v === 'string' && v) inputs[i.name] = i.path ? resolve(io.cwd, v) : v;
    else if (i.required) throw new UsageError(`--${o.flag} needs --${i.name} ${i.value} (${i.help})`);
  }
  if (f.root && !o.root) throw new UsageError(`--${o.flag} needs --root DIR (${f.root})`);
  for (const k of Object.keys(o.raw)) {
    if (!def.scoreOptions.some((s) => s.name === k)) {
      throw new LoupeInputError(
        `option ${k}`,
        `not a ${def.title} option (${def.scoreOptions.map((s) => s.name).join(', ')})`,
      );
    }
  }
  const r = await f.score({
    paths: o.paths.map((p) => resolve(io.cwd, p)),
    root: o.root ? resolve(io.cwd, o.root) : undefined,
    inputs,
    judge: o.judge,
    raw: o.raw,
    preset: o.preset,
  });
  if (o.json) io.out(JSON.stringify(r.json, jsonNumbers, 2) + '\n');
  else io.out(r.lines.map((l) => `${l}\n`).join(''));
  return r.failed ? 1 : 0;
}

/** The JSON shape of one run in `loupe score --json` (`decided`: who decided its judgements): LongDA adds `coverage`, `match` and per-query `queries`. */
/** Whether a score's run had its benchmark's default tool options. */
function defaultToolOptions(s: RunScore): boolean {
  const specs = findBenchmark(s.benchmark)?.toolOptions ?? [];
  return Object.entries(s.toolOptions ?? {}).every(([k, v]) => specs.find((o) => o.name === k)?.default === v);
}

export function jsonRun(s: RunScore): Record<string, unknown> {
  const out: Record<string, unknown> = {
    runId: s.runId,
    suite: s.suite,
    blockId: s.blockId,
    model: s.model,
    agent: s.agent,
    status: s.status,
    benchmark: s.benchmark,
    judge: s.judgeId,
    preset: presetOf(s),
    ...(s.changedBy ? { changedBy: s.changedBy } : {}),
    options: s.options,
    pending: s.pending,
    unjudged: s.unjudged,
    summary: s.summary,
  };
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
  for (const x of [...runs, ...aggs]) {
    for (const [k, v] of Object.entries(x.changedBy ?? {})) t.set(k, (t.get(k) ?? 0) + v);
  }
  return [...t]
    .filter(([, v]) => v > 0)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
}
