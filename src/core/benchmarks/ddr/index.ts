/**
 * DDR-Bench as one benchmark definition: explore a database from a one-line prompt, report insights; scored by
 * the entity's fact checklist (message-wise and trajectory-wise), exploration coverage, hallucination and
 * novelty. Source: DDR-Bench paper; DDR code (agents, judges, `calculate_overall_stats`); spec §3; issues 3, 6, 8, 12.
 */
import type { SuiteSourceDef } from '../../suites/fetch.ts';
import ddrSource from '../../../../benchmarks/ddr/source.json' with { type: 'json' };
import mimicDemoSource from '../../../../benchmarks/mimic-iv-demo/source.json' with { type: 'json' };
import { DDR_ITEM_TYPES } from './item-views.ts';
import { DDR_SQL_REPLAY } from './replay.ts';
import { ddrReviewSource } from './review.ts';
import type { ModelClient } from '../../agent/loop.ts';
import { messagesFromSteps } from '../../agent/loop.ts';
import type { ToolSet } from '../../agent/types.ts';
import type { OptionSpec } from '../options.ts';
import { CLAIMS_MODES, FACT_SPLIT_MODES } from '../../eval/atomic-claims.ts';
import type { BenchmarkDefinition } from '../types.ts';
import { ensureFolder, writeContainedFile } from '../../util/contained.ts';
import { DDR_OFFICIAL_OPTIONS, DEFAULT_DDR_OPTIONS } from './eval.ts';
import { saveChecklist } from './checklist.ts';
import { checkReadStatement, SqlRunner } from './sql-tool.ts';
import { loadDdr } from './load.ts';
import { aggregateDdr, scoreDdrRun } from './score.ts';
import {
  closeDdrRun,
  createDdrToolSet,
  finishDdrRun,
  readDdrResult,
  withDdrInsights,
  type DdrEmptyInsights,
  type DdrFinishRule,
  type DdrInsightMode,
} from './toolset.ts';
import { DDR_FAILURE_ANALYSIS, ddrItemOutcomes } from './failures.ts';
import { ddrNativeOutputs } from './native-outputs.ts';

const CODE = 'DDR code (agents/, evaluation/)';
const pct = (x: number | null | undefined) => (x === null || x === undefined ? '—' : (100 * x).toFixed(2));
const num = (x: number | null | undefined, d = 2) => (x === null || x === undefined ? '—' : x.toFixed(d));

/** DDR tool-set options (`--tool-option`). */
export const DDR_TOOL_OPTIONS: readonly OptionSpec[] = [
  {
    name: 'finishRule',
    type: 'enum',
    values: ['paper', 'code'],
    default: 'paper',
    help: 'the final report I_t: the FINISH message (paper) or the last assistant message (code)',
    source: 'DDR-Bench paper §3 vs DDR code (agent loop)',
  },
  {
    name: 'emptyInsights',
    type: 'enum',
    values: ['zero', 'drop'],
    default: 'zero',
    help: 'an entity with no insight scores 0 (paper) or leaves the averages (code)',
    source: 'DDR-Bench paper §4 vs DDR code',
  },
  {
    name: 'insights',
    type: 'enum',
    values: ['separate-call', 'reasoning'],
    default: 'separate-call',
    help: "message-wise insights from a separate model call per step (code) or from the step's reasoning text",
    source: 'DDR code (insight extraction)',
  },
  {
    name: 'python',
    type: 'bool',
    default: true,
    help: 'give the agent a Python tool beside execute_query',
    source: 'Loupe (DDR agents are SQL-only)',
  },
  {
    name: 'forcedSummary',
    type: 'bool',
    default: true,
    help: 'when the step budget ends the run, ask once for the final report',
    source: CODE,
  },
  {
    name: 'queryTimeoutMs',
    type: 'number',
    min: 0,
    exclusiveMin: true,
    help: "time limit of one SQL query (ms; default the tool's)",
    source: 'Loupe (containment)',
  },
];

/** DDR scoring options (`--option`). */
export const DDR_SCORE_OPTIONS: readonly OptionSpec[] = [
  {
    name: 'scenario',
    type: 'string',
    help: 'mimic | 10k | globem (default: guessed from the suite root)',
    source: 'DDR-Bench paper §3 (scenarios)',
  },
  {
    name: 'empty_insights',
    type: 'enum',
    values: ['zero', 'drop'],
    default: DEFAULT_DDR_OPTIONS.empty_insights,
    help: 'entities without valid insights score 0 (paper) or are dropped (code)',
    source: 'DDR-Bench paper §4 vs DDR calculate_overall_stats',
    presets: { official: DDR_OFFICIAL_OPTIONS.empty_insights, paper: 'zero' },
  },
  {
    name: 'no_insight_filter',
    type: 'enum',
    values: ['substring', 'exact'],
    default: DEFAULT_DDR_OPTIONS.no_insight_filter,
    help: 'drop insights containing "NO INSIGHT" (code) or only those that are exactly it',
    source: CODE,
  },
  {
    name: 'lenient',
    type: 'enum',
    values: ['scenario', 'always', 'never'],
    default: DEFAULT_DDR_OPTIONS.lenient,
    help: 'lenient judge wording: 10-K only (code), always, never',
    source: `${CODE}; spec §3.7`,
  },
  {
    name: 'globem_check',
    type: 'enum',
    values: ['answer', 'support'],
    default: DEFAULT_DDR_OPTIONS.globem_check,
    help: 'GLOBEM items: exact category answer (paper) or the support check',
    source: 'DDR-Bench paper §4; spec §3.7',
  },
  {
    name: 'failed_judgements',
    type: 'enum',
    values: ['exclude', 'count'],
    default: DEFAULT_DDR_OPTIONS.failed_judgements,
    help: 'failed judge calls leave the denominators (top-k curve too), or count as not correct (code)',
    source: `${CODE}: calculate_summary_stats, calculate_cumulative_message_stats`,
    presets: { official: DDR_OFFICIAL_OPTIONS.failed_judgements, paper: 'exclude' },
  },
  {
    name: 'unparsed_reply',
    type: 'enum',
    values: ['substring', 'whole-word', 'error'],
    default: DEFAULT_DDR_OPTIONS.unparsed_reply,
    help: "how a judge reply is read: as the code does (substring: Python json.loads with NaN/Infinity, DDR's context_quality key, an empty reply a failed call, other text labelled by substring so INCORRECT_INFO reads as correct), the same with labels read as whole words (whole-word: recommended for new evaluations), or JSON only, anything else a failed judgement (error)",
    source:
      'DDR unified_evaluator._parse_context_quality_result, evaluate_qa_with_* (issue 21 item 13, issue 47 items 9-11)',
    presets: { official: DDR_OFFICIAL_OPTIONS.unparsed_reply, paper: 'error' },
  },
  {
    name: 'label_case',
    type: 'enum',
    values: ['exact', 'any'],
    default: DEFAULT_DDR_OPTIONS.label_case,
    help: 'a judge label in other case ("correct_info"): counted as no label but kept in the denominator (code) or read case-insensitively',
    source: 'DDR base_evaluator.calculate_summary_stats',
    presets: { official: DDR_OFFICIAL_OPTIONS.label_case, paper: 'any' },
  },
  {
    name: 'concurrency',
    type: 'integer',
    min: 1,
    default: DEFAULT_DDR_OPTIONS.concurrency,
    help: 'parallel judge calls',
    source: 'Loupe',
  },
  {
    name: 'hallucination',
    type: 'enum',
    values: ['on', 'off'],
    default: 'on',
    help: 'audit each insight against what the agent saw (needs a judge)',
    source: 'DDR-Bench paper §4.4',
  },
  {
    name: 'novelty_seed',
    type: 'number',
    default: 0,
    help: 'seed of the pairwise novelty comparisons',
    source: 'DDR-Bench paper §4.3 (Bradley–Terry)',
  },
  {
    name: 'novelty_ties',
    type: 'enum',
    values: ['half', 'ignore'],
    default: 'half',
    help: 'a TIE counts half a win each, or is left out of the Bradley–Terry fit',
    source: 'DDR-Bench paper §4.3',
  },
  {
    name: 'claims',
    type: 'enum',
    values: CLAIMS_MODES,
    default: 'whole',
    help: "what the checklist judge, the top-k curve and novelty count: whole message-wise insights (the benchmark's unit) or their atomic facts (each linked to the queries that support it; an expert's split first)",
    source: 'DDR-Bench paper §4 (insights as written) vs FActScore atomic facts (issue 43)',
    presets: { official: 'whole', paper: 'whole' },
  },
  {
    name: 'fact_split',
    type: 'enum',
    values: FACT_SPLIT_MODES,
    default: 'judge',
    help: 'with claims=atomic: who splits an insight no expert split — the judge (fact-decomposition) or the list-marker rule (no model call)',
    source: 'Loupe (issue 43)',
  },
];

export const ddr: BenchmarkDefinition = {
  kind: 'ddr',
  title: 'DDR-Bench',
  description: 'explore a database from a one-line prompt and report insights; scored by a fact checklist',
  load: (root, opts) => loadDdr(root, opts),
  taskText(block) {
    const v = block.visible;
    const it = block.items[0];
    const out: string[] = [
      it && it.type === 'ddr-entity' ? `**${it.prompt}.**` : '',
      '',
      'There is no fixed question. Explore the database for this entity, form your own hypotheses, check them with queries, and report what you find.',
      'Finish with a final report that starts with `FINISH:` and states the insights you found, with the numbers that support them.',
      '',
    ];
    if (v.database) {
      out.push(`## Database \`${v.database.rel}\` (SQLite, read-only)`, '');
      for (const t of v.database.tables) {
        out.push(`### \`${t.name}\` (${t.rows ?? '?'} rows)`, '');
        if (t.comment) out.push(t.comment.replace(/\n/g, ' '), '');
        for (const c of t.columns) {
          out.push(`- \`${c.name}\` ${c.type}${c.comment ? `: ${c.comment.replace(/\n/g, ' ')}` : ''}`);
        }
        out.push('');
      }
    }
    return out;
  },
  listingFields: (b) => (b.ddr ? { checklistItems: b.ddr.checklistCount } : {}),
  blockSummary: null,
  docFiles: null,
  itemTypes: DDR_ITEM_TYPES,
  replayTools: [DDR_SQL_REPLAY],
  // the MIMIC-IV demo: a public database DDR's MIMIC scenario can be imported from
  downloadSources: { ddr: ddrSource as SuiteSourceDef, 'mimic-iv-demo': mimicDemoSource as SuiteSourceDef },
  loadOptions: [
    {
      name: 'entities',
      key: 'entities',
      type: 'string',
      value: 'TABLE.COLUMN',
      help: 'where entities come from when the root has no entity_ids.json',
    },
    {
      name: 'database',
      key: 'database',
      type: 'path',
      value: 'FILE',
      help: 'where a CSV folder is imported to (default: a cache file under the OS temp dir)',
    },
    {
      name: 'metadata',
      key: 'metadataDir',
      type: 'path',
      value: 'DIR',
      help: 'entity_ids.json / qa.json / metadata when the root is a database file',
    },
    {
      name: 'checklist',
      key: 'checklist',
      type: 'path',
      value: 'FILE',
      help: 'the checklist file (default <root>/qa.json)',
    },
    {
      name: 'tables',
      key: 'tableFilter',
      type: 'globs',
      value: 'GLOB,...',
      help: 'import only the tables matching these globs',
    },
  ],
  judgeFree: false,
  clusterUnit: 'entity',
  toolOptions: DDR_TOOL_OPTIONS,
  scoreOptions: DDR_SCORE_OPTIONS,
  toolSet: (ctx) =>
    createDdrToolSet({
      maxSteps: ctx.maxSteps,
      finishRule: ctx.options.finishRule as DdrFinishRule,
      emptyInsights: ctx.options.emptyInsights as DdrEmptyInsights,
      python: ctx.options.python !== false,
      ...(ctx.options.queryTimeoutMs !== undefined ? { queryTimeoutMs: ctx.options.queryTimeoutMs as number } : {}),
    }) as ToolSet,
  referenceAgent: null,
  kernelImportAllowlist: null,
  workspaceBlock: null,
  prepareModel(model, ctx) {
    // An external MCP client (issue 24) cannot be asked separate insight calls: its insights come from its messages.
    if (ctx.options.insights === 'reasoning' || model.model === 'reference' || model.external) return model;
    return withDdrInsights(
      model as ModelClient & { complete: ModelClient['complete'] },
      ctx.store,
      ctx.runId,
      ctx.toolSet.buildBlockPrompt(ctx.block),
    ) as ModelClient;
  },
  // After the loop: the result (I_t — with DDR's forced summary when the budget ended the run, unless
  // forcedSummary=false —, I_m, touched fields) is recorded as the run's `ddr-result` event.
  async completeRun(model, ctx, status) {
    closeDdrRun(ctx.runId);
    const messages = messagesFromSteps(
      ctx.toolSet.systemPrompt,
      ctx.toolSet.buildBlockPrompt(ctx.block),
      await ctx.store.getSteps(ctx.runId),
    );
    const flush = (model as { flushInsights?: (m: typeof messages) => Promise<void> }).flushInsights;
    if (flush) await flush(messages);
    await finishDdrRun(ctx.store, ctx.runId, {
      finishRule: ctx.options.finishRule as DdrFinishRule,
      emptyInsights: ctx.options.emptyInsights as DdrEmptyInsights,
      insights: model.external ? 'reasoning' : (ctx.options.insights as DdrInsightMode),
      ...(ctx.options.forcedSummary !== false && status === 'budget_exhausted' && !model.external
        ? { model, messages }
        : {}),
    });
  },
  runWithoutLoop: null,
  score: (ctx) =>
    scoreDdrRun({
      store: ctx.store,
      run: ctx.run,
      block: ctx.block,
      suite: ctx.suite,
      judge: ctx.judge,
      options: ctx.options,
    }),
  aggregate: (groups, ctx) => aggregateDdr(groups, ctx.judge, ctx.options),
  scoreLine(s) {
    const m = s.summary;
    return `I_m acc ${pct(m.messageWiseAccuracy)}%  I_t acc ${pct(m.trajectoryWiseAccuracy)}%  coverage ${pct(m.coverage)}%  H_norm ${num(m.normalizedEntropy, 3)}  halluc ${pct(m.hallucinationRate)}%${s.pending ? `  (${s.pending} pending)` : ''}${s.unjudged - s.pending ? `  (${s.unjudged - s.pending} unjudged)` : ''}`;
  },
  scoreJson: null,
  runLineScore: null,
  checklist: {
    kind: 'fact',
    entityOf: (block) => block.ddr?.entityId,
    exportNative(block, items, file) {
      saveChecklist(
        file,
        block.ddr?.entityId ?? block.id,
        items.map((i) => ({
          question: i.question,
          answer: i.answer,
          ...(i.sourceText ? { sourceText: i.sourceText } : {}),
        })),
      );
      return file;
    },
    nativeItems: (block) => block.hidden.checklist ?? [],
    withItems: (block, items) => ({ ...block, hidden: { ...block.hidden, checklist: [...items] } }),
    evidenceTables: (block) =>
      block.visible.database
        ? block.visible.database.tables.map((t) => ({ name: t.name, columns: t.columns.map((c) => c.name) }))
        : null,
    loadWith: (file) => ({ checklist: file }),
    async evidenceQuery(block, sql, o) {
      const db = block.visible.database?.path;
      if (!db) throw new Error(`block ${block.id} has no database`);
      const check = checkReadStatement(sql);
      if (!check.ok) throw new Error(check.reason);
      const runner = new SqlRunner(db, { sandbox: o.sandbox, timeoutMs: 30_000 });
      try {
        const r = await runner.query(sql);
        return { columns: r.cols, rows: r.data, rowCount: r.count, truncated: !!r.truncated };
      } finally {
        runner.close();
      }
    },
    checkItems(block, items) {
      const tables = new Map(
        (block.visible.database?.tables ?? []).map((t) => [
          t.name.toLowerCase(),
          new Set(t.columns.map((c) => c.name.toLowerCase())),
        ]),
      );
      const out: string[] = [];
      items.forEach((it, k) => {
        const ref = /^\s*([A-Za-z_][\w]*)\.([A-Za-z_][\w]*)\s*$/.exec(it.sourceText ?? '');
        if (!ref || !tables.size) return;
        const cols = tables.get(ref[1]!.toLowerCase());
        if (!cols) {
          out.push(
            `item ${k + 1} (${it.id}): the database has no table ${ref[1]} (tables: ${[...tables.keys()].slice(0, 8).join(', ')}${tables.size > 8 ? ', ...' : ''})`,
          );
        } else if (!cols.has(ref[2]!.toLowerCase())) {
          out.push(
            `item ${k + 1} (${it.id}): table ${ref[1]} has no column ${ref[2]} (columns: ${[...cols].join(', ')})`,
          );
        }
      });
      return out;
    },
  },
  presentation: {
    tableTitle: 'DDR-Bench',
    mainMetric: { key: 'messageWiseAccuracy', label: 'DDR message-wise accuracy', percent: true },
    resultsColumns: null,
    tokenEfficiency: null,
    toolUsage: null,
    categoryCis: null,
    itemOutcomes: ddrItemOutcomes,
  },
  review: { sectionsOf: ddrReviewSource, criteria: () => null },
  groundTruth: null,
  evidenceFiles: null,
  failureAnalysis: DDR_FAILURE_ANALYSIS,
  importNativeOutputs: ddrNativeOutputs(DDR_SCORE_OPTIONS),
  async exportResults(store, runs, dir) {
    if (!runs.length) return [];
    ensureFolder(dir);
    const lines: string[] = [];
    for (const r of [...runs].sort((a, b) => a.repeat - b.repeat)) {
      lines.push(
        JSON.stringify({
          runId: r.runId,
          entityId: r.block.ddr?.entityId ?? r.block.id,
          repeat: r.repeat,
          ...((await readDdrResult(store, r.runId)) ?? {}),
        }),
      );
    }
    return [writeContainedFile(dir, 'ddr_results.jsonl', lines.join('\n') + '\n')];
  },
};
