/**
 * Option groups shared by several `loupe` commands, declared once (issue 40); a command composes them with its own
 * options (`declareCommand`). The store's group is `STORE_OPTIONS` in `store-arg.ts`. Loader flags are built from the
 * benchmark registry: each benchmark declares its loader options (`BenchmarkDefinition.loadOptions`), and every
 * command that loads a suite takes all of them, resolving path options against the working folder.
 */
import { benchmarkKinds, benchmarks } from '../core/benchmarks/registry.ts';
import { loadOptionValues, type LoadOptionSpec } from '../core/benchmarks/options.ts';
import type { BenchmarkDefinition } from '../core/benchmarks/types.ts';
import type { LoadSuiteOptions } from '../core/suites/types.ts';
import { optionGroup, type CliOption, type OptionGroup } from './options.ts';
import { UsageError } from './types.ts';
import { parseOtelEndpoint, parseOtelHeaders, type OtelExportConfig } from '../core/runs/otel.ts';
import { LoupeInputError } from '../core/util/errors.ts';

/** `--suite S --root DIR`: the benchmark and its folder on disk. */
export const SUITE_OPTIONS = optionGroup('suite', {
  suite: {
    type: 'string',
    get value() {
      return benchmarkKinds().join('|');
    },
    help: 'the benchmark',
  },
  root: { type: 'string', value: 'DIR', help: "the suite's folder on disk" },
});

/** `--json`: machine-readable output (each command's notes say its shape). */
export const JSON_OPTIONS = optionGroup('output', {
  json: { type: 'boolean', help: 'print JSON instead of text' },
});

/** The judge of `loupe score` / `loupe review`. */
export const JUDGE_OPTIONS = optionGroup('judge', {
  judge: {
    type: 'string',
    value: 'none|llm|human|llm+human|file:VERDICTS.jsonl',
    help: 'who decides the items that need judgement (default none)',
  },
  'judge-model': { type: 'string', value: 'M', help: "the LLM judge's model" },
  'judge-base-url': { type: 'string', value: 'URL', help: "the LLM judge's OpenAI-compatible endpoint" },
  'judge-api-key-env': {
    type: 'string',
    value: 'VAR',
    help: "the variable holding the judge's API key (default OPENAI_API_KEY; never stored)",
  },
});

/** The model an agent (or a question decomposition) uses. */
export const MODEL_OPTIONS = optionGroup('model', {
  model: { type: 'string', value: 'M', help: 'the model' },
  'base-url': { type: 'string', value: 'URL', help: 'its OpenAI-compatible endpoint' },
  'api-key-env': {
    type: 'string',
    value: 'VAR',
    default: 'OPENAI_API_KEY',
    help: 'the variable holding the API key (never stored)',
  },
});

/** Where agent code runs. */
export const SANDBOX_OPTIONS = optionGroup('kernel', {
  sandbox: {
    type: 'string',
    value: 'bubblewrap|off',
    help: "run the agent's Python in the bubblewrap sandbox or not (default bubblewrap, or $LOUPE_SANDBOX)",
  },
  python: { type: 'string', value: 'PATH', help: 'the Python interpreter (default $LOUPE_PYTHON, else found)' },
});

/** Limits of the agent's kernel. */
export const KERNEL_LIMIT_OPTIONS = optionGroup('kernel limits', {
  'cell-timeout-ms': { type: 'string', value: 'N', help: 'a cell running longer is stopped' },
  'workspace-quota-mb': {
    type: 'string',
    value: 'N',
    help: "total size the run's workspace may reach (default 2048, 0 = none)",
  },
});

/** A run's budget and what the agent sees of an observation. */
export const RUN_LIMIT_OPTIONS = optionGroup('budget', {
  'max-steps': { type: 'string', value: 'N', help: "steps a run may take (default: the benchmark's)" },
  'max-wall-ms': { type: 'string', value: 'N', help: 'wall-clock time a run may take' },
  'max-observation-chars': {
    type: 'string',
    value: 'N',
    help: 'an observation longer than N is cut, head and tail kept (default 20000)',
  },
});

/** Named tool-set options of the benchmark (recorded with the run). */
export const TOOL_OPTIONS = optionGroup('tool options', {
  'tool-option': {
    type: 'string',
    multiple: true,
    value: 'key=value',
    help: "a tool-set option of the benchmark (repeatable; see each benchmark's toolOptions)",
  },
});

/** Progress detail on stderr. */
export const VERBOSE_OPTIONS = optionGroup('log', {
  verbose: { type: 'boolean', help: 'log debug detail to stderr' },
});

/** `--experiment TAG`: only the runs of one experiment (runs carrying the tag; issue 43). */
export const EXPERIMENT_OPTIONS = optionGroup('experiment', {
  experiment: {
    type: 'string',
    value: 'TAG',
    help: 'only runs of this experiment (runs tagged TAG: loupe runs --tag RUN TAG)',
  },
});

/** The documentation index of a folder. */
export const DOCS_OPTIONS = optionGroup('documentation index', {
  cache: { type: 'string', value: 'DIR', help: 'where the index is kept (default: the user cache folder)' },
  'pdf-extractor': { type: 'string', value: 'pdfium|pdfjs', help: 'how PDFs are read (default pdfium)' },
});

/**
 * The loader options of every registered benchmark, one flag each, with the suites that read it.
 * @throws Error when two benchmarks declare the same flag with another meaning (type or loader member).
 */
export function loaderSpecs(): Map<string, { spec: LoadOptionSpec; kinds: string[] }> {
  const out = new Map<string, { spec: LoadOptionSpec; kinds: string[] }>();
  for (const b of benchmarks()) {
    for (const s of b.loadOptions) {
      const have = out.get(s.name);
      if (have && (have.spec.key !== s.key || have.spec.type !== s.type)) {
        throw new Error(`loader option --${s.name} of ${b.kind} means another thing in ${have.kinds.join(', ')}`);
      }
      if (have) have.kinds.push(b.kind);
      else out.set(s.name, { spec: s, kinds: [b.kind] });
    }
  }
  return out;
}

/** The loader flags of every registered benchmark (built when a command runs or prints its help). */
export function loaderOptionGroup(): OptionGroup {
  const options: Record<string, CliOption> = {};
  for (const [name, { spec, kinds }] of loaderSpecs()) {
    options[name] = {
      type: 'string',
      value: spec.value,
      help: `${spec.help} (--suite ${kinds.join(', ')}${spec.type === 'path' ? '; relative to the working folder' : ''})`,
    };
  }
  return { title: 'loader options (as the benchmark declares them)', options };
}

/**
 * The loader options given on the command line, as the loader takes them: paths resolved against `cwd`.
 * @param extra parsed values of the registry-built flags (`parseCommand(...).extra`).
 * @param def the benchmark when the suite is known: a flag it does not read is a usage error; undefined (scoring
 *   stored runs of any benchmark): every given flag is passed on.
 * @throws UsageError naming a flag that the chosen benchmark does not read; LoupeInputError for a bad glob.
 */
export function loaderOptionsFromArgs(
  extra: Readonly<Record<string, unknown>>,
  cwd: string,
  def?: BenchmarkDefinition,
): Omit<LoadSuiteOptions, 'log' | 'onProgress'> {
  const specs = loaderSpecs();
  const raw: Record<string, string | undefined> = {};
  for (const [name, { kinds }] of specs) {
    const v = extra[name];
    if (typeof v !== 'string' || !v) continue;
    if (def && !def.loadOptions.some((s) => s.name === name)) {
      throw new UsageError(`--${name} applies to ${kinds.map((k) => `--suite ${k}`).join(' or ')} only`);
    }
    raw[name] = v;
  }
  return loadOptionValues(
    [...specs.values()].map((x) => x.spec),
    raw,
    cwd,
  ) as Omit<LoadSuiteOptions, 'log' | 'onProgress'>;
}

/** How OpenTelemetry spans are sent (issue 45): headers and the text bound, beside an endpoint flag of the command. */
export const OTEL_OPTIONS = optionGroup('OpenTelemetry', {
  'otel-header': {
    type: 'string',
    multiple: true,
    value: 'NAME=VALUE',
    help: 'an HTTP header sent to the OTLP endpoint (repeatable; also $OTEL_EXPORTER_OTLP_HEADERS, k=v,k=v)',
  },
  'otel-max-text': {
    type: 'string',
    value: 'N',
    help: 'longest text attribute sent (messages, tool arguments and results; longer ones are cut with a marker; default 4096)',
  },
});

/**
 * The OpenTelemetry export of a command line: the endpoint checked, headers from `--otel-header` and
 * `$OTEL_EXPORTER_OTLP_HEADERS`, the text bound.
 * @param endpoint the URL given; `flag` the flag it came from (named in errors); `v` the parsed OTEL_OPTIONS values.
 * @throws UsageError naming the flag at fault.
 */
export function otelConfigFromArgs(
  endpoint: string,
  flag: string,
  v: { 'otel-header'?: string[]; 'otel-max-text'?: string },
  env: NodeJS.ProcessEnv,
): OtelExportConfig {
  const max = v['otel-max-text'] === undefined ? undefined : Number(v['otel-max-text']);
  if (max !== undefined && !(Number.isInteger(max) && max >= 64)) {
    throw new UsageError(`--otel-max-text must be an integer of at least 64, got '${v['otel-max-text']}'`);
  }
  try {
    return {
      endpoint: parseOtelEndpoint(endpoint, flag),
      headers: parseOtelHeaders(v['otel-header'] ?? [], env.OTEL_EXPORTER_OTLP_HEADERS, '--otel-header'),
      ...(max !== undefined ? { maxTextChars: max } : {}),
    };
  } catch (e) {
    if (e instanceof LoupeInputError) throw new UsageError(e.message);
    throw e;
  }
}
