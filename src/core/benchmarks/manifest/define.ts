/**
 * A manifest (`loupe-benchmark.yaml`) made into a {@link BenchmarkDefinition}: the same object the built-in benchmarks
 * are, so the runner, replay, scoring, the CLI and every view use one code path for both. The tool set is Loupe's
 * python kernel tool and an `answer` tool taking the response text; the score is the manifest's built-in scorer and
 * aggregations, with `official` / `paper` presets for the denominator. Source: issue 44.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { BenchmarkDefinition, ItemOutcome, FailedItem } from '../types.ts';
import type { ToolDefinition, ToolSet } from '../../agent/types.ts';
import type { Block } from '../../suites/types.ts';
import { LoupeInputError } from '../../util/errors.ts';
import { formatKernelResult } from '../../agent/kernel-output.ts';
import { aggregateBase, scoreBase, type RunScore } from '../../eval/run-score.ts';
import { parseOptionsWithPreset, type OptionSpec, type OptionValues } from '../options.ts';
import type { Taxonomy } from '../../failures/taxonomy.ts';
import { readManifest, type Manifest } from './manifest.ts';
import { loadManifestSuite } from './load.ts';
import {
  aggregateItems,
  DEFAULT_AGGREGATIONS,
  extractNamed,
  scoreItem,
  type Denominator,
  type ItemResult,
} from './eval.ts';
import { manifestNativeOutputs } from './native-outputs.ts';
import { scoreWithPython, type PythonScorerInput } from './python-scorer.ts';
import { scoreJudged, type JudgedResults } from './judged.ts';
import type { Judge } from '../../eval/judges/types.ts';

/** Scorers that ask the judge. */
const JUDGED = new Set(['llm-judge', 'checklist', 'rubric']);
import { ManifestReferenceModel } from './reference.ts';
import type { ManifestBlock, ManifestItem } from './items.ts';

/** Responses a run recorded with the answer tool (tool-set state `manifest`). */
export interface ManifestRunState {
  responses: Record<string, string>;
}

/** What a manifest benchmark's run score keeps in `detail`. */
export interface ManifestRunDetail {
  items: ItemResult[];
  denominator: Denominator;
  breakdowns: Record<string, Record<string, number>>;
}

const manifestFiles = new WeakMap<BenchmarkDefinition, string>();

/** The manifest file a benchmark was made from, or undefined for a benchmark written in TypeScript. */
export function manifestFileOf(def: BenchmarkDefinition): string | undefined {
  return manifestFiles.get(def);
}

/** A generic failure taxonomy for closed-form answers (Loupe's own; a manifest benchmark's paper may have none). */
const TAXONOMY: Taxonomy = {
  id: 'closed-form',
  title: "Closed-form answer failures (Loupe's own)",
  origin: 'loupe',
  source: "Loupe, issue 44: Loupe's own taxonomy for manifest benchmarks, not from a benchmark paper",
  unit: 'step',
  classes: [
    {
      id: 'format',
      label: 'Answer format',
      definition:
        'The value may be right but the response does not follow the required format (names, brackets, units), so it cannot be read.',
    },
    {
      id: 'constraint-ignored',
      label: 'Constraint ignored',
      definition: 'The response ignores a stated constraint (method, filtering, rounding, library).',
    },
    {
      id: 'wrong-data',
      label: 'Wrong column or rows',
      definition: 'The computation uses another column, another subset of rows, or mishandles missing values.',
    },
    { id: 'wrong-method', label: 'Wrong method', definition: 'The statistic, test or model is not the one asked for.' },
    {
      id: 'rounding',
      label: 'Rounding or precision',
      definition: 'The right quantity rounded or truncated differently than asked.',
    },
    { id: 'partial', label: 'Partial answer', definition: 'Some sub-answers are missing.' },
    { id: 'gave-up', label: 'Gave up', definition: 'No response, or one saying the answer could not be determined.' },
  ],
};

const itemsOf = (b: Block): ManifestItem[] => (b as ManifestBlock).items.filter((i) => i.type === 'manifest-item');

/** The task text of one item (instruction, constraints, format, files). */
function itemText(it: ManifestItem): string[] {
  const out = [`### Question ${it.id}`, it.instruction.trim()];
  if (it.constraints.trim()) out.push('', `Constraints: ${it.constraints.trim()}`);
  if (it.answerFormat.trim()) out.push('', `Answer format: ${it.answerFormat.trim()}`);
  if (it.files.length) out.push('', `Data: ${it.files.join(', ')}`);
  out.push('');
  return out;
}

/** The scoring options of a manifest: the denominator (with its presets) and the rounding. */
function scoreOptionsOf(m: Manifest): OptionSpec[] {
  const den = m.scoring.denominator ?? {};
  return [
    {
      name: 'denominator',
      type: 'enum',
      values: ['answered', 'all'],
      default: den.official ?? 'all',
      help: 'which questions rates divide by: answered (a non-empty response) or all (unanswered count as wrong)',
      source: `${m.title} manifest scoring.denominator`,
      presets: { ...(den.official ? { official: den.official } : {}), ...(den.paper ? { paper: den.paper } : {}) },
    },
    {
      name: 'round',
      type: 'integer',
      min: -1,
      default: m.scoring.round ?? -1,
      help: 'decimals of the metrics (Python round); -1 for none',
      source: `${m.title} manifest scoring.round`,
    },
  ];
}

/** Responses of a run as recorded by the answer tool. */
function responsesOf(extra: Record<string, unknown>): Record<string, string> {
  const st = extra.manifest as ManifestRunState | undefined;
  return st && typeof st.responses === 'object' && st.responses ? st.responses : {};
}

/**
 * Builds the benchmark a manifest declares.
 * @param loaded the manifest and its folder (reference scripts and a python scorer are relative to it).
 * @returns a complete {@link BenchmarkDefinition}.
 * Source: issue 44; CONTRIBUTING.md "Adding a benchmark" (every member).
 */
export function manifestBenchmark(loaded: { manifest: Manifest; dir: string; file: string }): BenchmarkDefinition {
  const m = loaded.manifest;
  const aggs = m.scoring.aggregations ?? DEFAULT_AGGREGATIONS;
  const scoreOptions = scoreOptionsOf(m);
  const resolveOptions = (raw: Readonly<Record<string, string>>, preset: 'official' | 'paper'): OptionValues =>
    parseOptionsWithPreset(scoreOptions, preset, raw, (n) => `option ${n}`, m.title);
  const rounding = (o: OptionValues): number | undefined =>
    typeof o.round === 'number' && o.round >= 0 ? o.round : undefined;
  const tools = new Set(m.tools ?? ['python', 'answer']);
  const first = aggs[0]!;
  /** Item results by the built-in scorer, or by the manifest's Python module in the sandbox. */
  const judged = JUDGED.has(m.scoring.scorer);
  const scoreAll = async (
    inputs: PythonScorerInput[],
    judge?: () => Judge,
    instructionOf?: (id: string) => string,
    runId?: string,
  ): Promise<JudgedResults> => {
    if (judged) return scoreJudged(m, inputs, judge!(), instructionOf ?? (() => ''), runId);
    if (m.scoring.scorer !== 'python') {
      return {
        results: inputs.map((i) => scoreItem(i.id, i.response, i.gold, m.scoring, i.metadata)),
        pending: 0,
        unjudged: 0,
      };
    }
    return {
      results: await scoreWithPython(resolve(loaded.dir, m.scoring.module!), inputs, {
        timeoutSeconds: m.scoring.timeoutSeconds ?? 60,
      }),
      pending: 0,
      unjudged: 0,
    };
  };
  const def: BenchmarkDefinition = {
    kind: m.kind,
    title: m.title,
    description: m.description ?? `${m.title} (benchmark manifest ${loaded.file})`,
    load: async (root) => loadManifestSuite(m, root),
    taskText: (block) => [
      ...(m.prompt?.preamble ? [m.prompt.preamble.trim(), ''] : []),
      ...itemsOf(block).flatMap(itemText),
      'Record each answer with the answer tool (the question id and your response in the answer format), then call finish.',
      '',
    ],
    docFiles: null,
    itemTypes: {
      'manifest-item': {
        icon: 'question',
        describe: (i) => ({
          label: `${(i as ManifestItem).id}: ${(i as ManifestItem).instruction.slice(0, 80)}`,
          detail: (i as ManifestItem).instruction,
        }),
        view: (i) => {
          const it = i as ManifestItem;
          return {
            title: `Question ${it.id}`,
            text: it.instruction,
            fields: [
              ...(it.constraints ? [{ name: 'Constraints', value: it.constraints }] : []),
              ...(it.answerFormat ? [{ name: 'Answer format', value: it.answerFormat, code: true }] : []),
              ...Object.entries(it.metadata).map(([k, v]) => ({
                name: k,
                value: Array.isArray(v) ? v.join(', ') : String(v),
              })),
              ...(it.files.length ? [{ name: 'Data', value: it.files.join('\n'), code: true }] : []),
            ],
          };
        },
        groundTruth: (block, i) =>
          ((block as ManifestBlock).hidden.gold?.[(i as ManifestItem).id]?.answers ?? []).map(([name, value]) => ({
            name,
            value,
            code: true,
          })),
        hiddenFields: [],
      },
    },
    downloadSources: {},
    replayTools: [],
    loadOptions: [],
    judgeFree: !JUDGED.has(m.scoring.scorer), // llm-judge, checklist and rubric ask the judge
    clusterUnit: m.clusterUnit ?? 'block',
    listingFields: (b) => ({
      questions: itemsOf(b).length,
      subAnswers: Object.values((b as ManifestBlock).hidden.gold ?? {}).reduce((n, g) => n + g.answers.length, 0),
    }),
    toolOptions: [],
    scoreOptions,
    toolSet: (ctx): ToolSet => {
      const block = ctx.block;
      const ids = itemsOf(block).map((i) => i.id);
      const list: ToolDefinition[] = [];
      if (tools.has('python')) {
        list.push({
          name: 'python',
          description:
            'Runs Python code in a persistent kernel whose working directory is the workspace (data files under data/; pandas and numpy installed). Returns stdout, the last expression, errors.',
          parameters: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] },
          async run(args, tc) {
            const r = await tc.execute(String(args.code ?? ''));
            const note = r.restarted ? '[The Python kernel was restarted: all variables were lost.]\n' : '';
            return {
              observation: note + formatKernelResult({ ...r, restarted: false }),
              isError: r.status !== 'ok',
              data: { status: r.status, durationMs: r.durationMs },
            };
          },
        });
      }
      list.push({
        name: 'answer',
        description: `Records the response to one question (the last call for a question wins).${m.scoring.scorer === 'regex-extract' ? " Write it in the question's answer format." : ''}`,
        parameters: {
          type: 'object',
          properties: {
            id: { type: 'string', description: `question id: ${ids.join(', ')}` },
            response: { type: 'string' },
          },
          required: ['id', 'response'],
        },
        async run(args, tc) {
          const id = String(args.id ?? '').trim();
          if (!ids.includes(id)) {
            return {
              observation: `Error: '${id}' is not a question of this block. Valid ids: ${ids.join(', ')}`,
              isError: true,
            };
          }
          const response = typeof args.response === 'string' ? args.response : JSON.stringify(args.response ?? '');
          const st = (tc.state.extra.manifest ??= { responses: {} }) as ManifestRunState;
          st.responses[id] = response;
          let note = '';
          if (m.scoring.scorer === 'regex-extract') {
            const names = [...extractNamed(response, m.scoring.pattern!).keys()];
            note = names.length
              ? ` Read sub-answers: ${names.join(', ')}.`
              : ' Warning: no sub-answer in the answer format was found in it.';
          }
          return {
            observation: `Response to ${id} recorded (${Object.keys(st.responses).length} of ${ids.length} answered).${note}`,
          };
        },
      });
      list.push({
        name: 'finish',
        description: 'Ends the work on this block.',
        parameters: { type: 'object', properties: {} },
        async run(_a, tc) {
          const got = responsesOf(tc.state.extra);
          const missing = ids.filter((i) => !got[i]);
          return {
            observation: `Finished: ${ids.length - missing.length} of ${ids.length} answered.${missing.length ? ` Unanswered: ${missing.join(', ')}` : ''}`,
            finish: true,
          };
        },
      });
      return {
        id: m.kind,
        tools: list,
        hostPaths: [], // responses are tool-set state (a row of the store); python runs in the kernel's sandbox
        systemPrompt:
          m.prompt?.system ??
          "You are a data analyst. Answer each question from the data files in your workspace, computing with Python. Follow each question's constraints and answer format exactly. Record every answer with the answer tool, then call finish.",
        buildBlockPrompt: (b) => def.taskText(b as Block).join('\n'),
        defaultMaxSteps: ctx.maxSteps ?? Math.max(10, ids.length * 6),
      };
    },
    referenceAgent: m.reference
      ? (block, o) =>
          new ManifestReferenceModel(block, findScript(o.referenceDir ?? resolve(loaded.dir, m.reference!), block))
      : null,
    kernelImportAllowlist: null,
    workspaceBlock: null,
    prepareModel: null,
    completeRun: null,
    runWithoutLoop: null,
    async score(ctx) {
      const options = ctx.options;
      const responses = responsesOf(await ctx.store.getExtraState(ctx.run.id));
      const block = ctx.block as ManifestBlock;
      const inputs = itemsOf(block)
        .filter((it) => block.hidden.gold?.[it.id])
        .map((it) => ({
          id: it.id,
          response: responses[it.id] ?? '',
          gold: block.hidden.gold[it.id]!,
          metadata: it.metadata,
        }));
      const byId = new Map(itemsOf(block).map((it) => [it.id, it.instruction]));
      const {
        results: items,
        pending,
        unjudged,
      } = await scoreAll(
        inputs,
        () => ctx.judge,
        (id) => byId.get(id) ?? '',
        ctx.run.id,
      );
      const den = options.denominator as Denominator;
      const agg = aggregateItems(items, aggs, den, rounding(options));
      const detail: ManifestRunDetail = { items, denominator: den, breakdowns: agg.breakdowns };
      return {
        ...scoreBase(ctx.run, m.kind, judged ? ctx.judge.id : 'none', options),
        pending,
        unjudged,
        summary: { ...agg.summary, answered: agg.items ? items.filter((i) => i.answered).length / agg.items : null },
        detail,
      };
    },
    async aggregate(groups, ctx) {
      return groups.map(({ model, scores }) => {
        const items = scores
          .filter((s) => !s.error)
          .flatMap((s) => (s.detail as ManifestRunDetail | null)?.items ?? []);
        const den =
          (ctx.options.denominator as Denominator | undefined) ??
          (scores[0]?.detail as ManifestRunDetail | null)?.denominator ??
          'all';
        const agg = aggregateItems(items, aggs, den, rounding(ctx.options));
        return {
          ...aggregateBase(m.kind, model, scores),
          metrics: agg.summary,
          method: `pooled over the questions of all runs (denominator ${den})`,
          options: ctx.options,
          extra: { breakdowns: agg.breakdowns, counted: agg.counted, questions: agg.items },
        };
      });
    },
    scoreLine: (s) =>
      aggs
        .filter((a) => s.summary[a.metric] !== undefined)
        .map(
          (a) => `${a.metric} ${s.summary[a.metric] === null ? 'n/a' : (s.summary[a.metric]! * 100).toFixed(1) + '%'}`,
        )
        .join('  '),
    scoreJson: null,
    runLineScore: null,
    checklist: null,
    presentation: {
      tableTitle: m.title,
      mainMetric:
        first.kind === 'by-field' || first.kind === 'by-field-count'
          ? null
          : { key: first.metric, label: `${m.title} ${first.label ?? first.metric}`, percent: true },
      resultsColumns: null,
      tokenEfficiency: null,
      toolUsage: null,
      categoryCis: null,
      itemOutcomes: (s: RunScore): ItemOutcome[] =>
        ((s.detail as ManifestRunDetail | null)?.items ?? []).map((r) => {
          const right = r.subs.filter((x) => x.correct).length;
          return {
            ref: r.id,
            question: `Question ${r.id}`,
            verdict: !r.answered ? 'unanswered' : r.correct ? 'right' : right > 0 ? 'partial' : 'wrong',
            credit: r.subs.length ? right / r.subs.length : 0,
            given: r.response,
            expected: r.subs.map((x) => `${x.name} = ${x.expected}`).join('; '),
          };
        }),
    },
    review: {
      sectionsOf: async (store, run) => {
        const responses = responsesOf(await store.getExtraState(run.id));
        const keys = Object.keys(responses);
        if (!keys.length) return null;
        return {
          sections: keys
            .sort((a, b) => a.localeCompare(b, undefined, { numeric: true }))
            .map((k) => ({
              key: k,
              title: `Question ${k}`,
              markdown: '```\n' + responses[k]!.replace(/`{3,}/g, '` ` `') + '\n```',
            })),
        };
      },
      criteria: () => null,
    },
    evidenceFiles: null,
    groundTruth: null,
    exportResults: null,
    failureAnalysis: {
      taxonomy: TAXONOMY,
      scenario: (s) => s.blockId,
      failedItems: (s): FailedItem[] =>
        ((s.detail as ManifestRunDetail | null)?.items ?? [])
          .filter((r) => !r.correct)
          .map((r) => ({
            ref: r.id,
            question: `Question ${r.id}`,
            detail: r.answered
              ? r.subs
                  .filter((x) => !x.correct)
                  .map((x) => `${x.name}: expected ${x.expected}, got ${x.given ?? 'nothing'}`)
                  .join('; ')
              : 'no response',
          })),
      insights: null,
    },
    importNativeOutputs: null,
    blockSummary: null,
  };
  const out: BenchmarkDefinition = { ...def, importNativeOutputs: manifestNativeOutputs(m, resolveOptions, scoreAll) };
  manifestFiles.set(out, resolve(loaded.file));
  return out;
}

/** The reference script of a block, `<dir>/<block id>.py`. @throws LoupeInputError naming the path when absent. */
function findScript(dir: string, block: Block): string {
  const p = join(dir, `${block.id}.py`);
  if (!existsSync(p)) {
    throw new LoupeInputError(
      p,
      `no reference script for block ${block.id} (the reference agent needs ${block.id}.py in ${dir})`,
    );
  }
  return p;
}

/**
 * The benchmark declared by the manifest in a folder (`loupe-benchmark.yaml` / `.json`).
 * @throws LoupeInputError naming the file, line and field of a manifest problem.
 */
export function manifestBenchmarkAt(dir: string): BenchmarkDefinition {
  return manifestBenchmark(readManifest(dir));
}
