import { presetOf } from '../core/eval/run-score.ts';
import { writeFileSync } from 'node:fs';
import { findBenchmark } from '../core/benchmarks/registry.ts';
import { buildReport, headlineSection, renderHtml, renderMarkdown } from '../app/report/report.ts';
import { headlineTables, resultsFile, type SuiteHeadline } from '../app/compare/headline.ts';
import type { RunRecord, StoredScore } from '../core/store/records.ts';
import {
  aggregateScores,
  assistedModel,
  refreshAssistance,
  scoreStoredRun,
  type RunScore,
} from '../core/runs/score-stored-run.ts';
import { ExactOnlyJudge } from '../core/eval/judges/index.ts';
import { judgementStoreOf } from '../core/eval/store.ts';
import { openExistingStore, runsRootOf, STORE_OPTIONS } from './store-arg.ts';
import type { Suite } from '../core/suites/types.ts';
import { UsageError } from './types.ts';
import { annotationStoreOf } from '../core/annotations/index.ts';
import { failureFigures, type FailureFigures } from '../core/failures/figures.ts';
import { taxonomyCatalog } from '../app/failures/registry.ts';
import { failureReportSection } from '../app/failures/report.ts';
import { declareCommand, defineCommand, optionGroup, parseCommand } from './options.ts';

const DECL = declareCommand({
  synopsis: 'report',
  groups: [
    optionGroup('report', {
      format: { type: 'string', value: 'md|html', help: 'Markdown or HTML with Vega-Lite plots (default md)' },
      out: { type: 'string', value: 'FILE', help: 'write here (default stdout)' },
      suite: { type: 'string', value: 'S', help: 'only runs of this benchmark' },
      'suite-root': {
        type: 'string',
        value: 'DIR',
        help: 'where the suite is when runs are scored on the spot (default: the root recorded with each run)',
      },
      title: { type: 'string', value: 'T', help: "the report's title (default Loupe results)" },
      'results-json': {
        type: 'string',
        value: 'FILE',
        help: 'also write the headline figures (clustered SEs, paired differences) as JSON here',
      },
      seed: {
        type: 'string',
        value: 'N',
        help: 'seed of the cluster bootstrap of the headline comparisons (default 0)',
      },
    }),
    STORE_OPTIONS,
  ],
  notes: `  Uses the latest score saved by 'loupe score' for each run; runs of a benchmark that needs no judge (LongDA)
  without a saved score are scored on the spot. Runs of other benchmarks without a saved score are listed as
  not scored.`,
});

export const reportCommand = defineCommand({
  name: 'report',
  summary: 'write a results report (Markdown or HTML with Vega-Lite plots) from scored runs',
  declarations: [DECL],
  async run(argv, io) {
    const { values } = parseCommand(DECL, argv);
    const format = values.format ?? 'md';
    if (format !== 'md' && format !== 'html') throw new UsageError(`--format must be md or html, got '${format}'`);
    const store = await openExistingStore(io, values.store);
    let runs: RunScore[] = [];
    let failures: FailureFigures | undefined;
    const records: RunRecord[] = [];
    const seed = values.seed === undefined ? 0 : Number(values.seed);
    if (!Number.isInteger(seed) || seed < 0) {
      throw new UsageError(`--seed must be a non-negative integer, got '${values.seed}'`);
    }
    try {
      const saved = new Map<string, RunScore>();
      // newest first; a score saved before presets existed (issue 21) reads as preset 'legacy'
      for (const s of await store.scores.list()) {
        if (!saved.has(s.runId)) {
          saved.set(s.runId, { ...(s.detail as RunScore), preset: presetOf(s.detail as RunScore) });
        }
      }
      const judge = new ExactOnlyJudge(judgementStoreOf(store));
      const suites = new Map<string, Promise<Suite>>();
      for (const r of (await store.listRuns(values.suite ? { suite: values.suite } : {})).reverse()) {
        records.push(r);
        const s = saved.get(r.id);
        if (s) runs.push(s);
        else if (findBenchmark(r.suite)?.judgeFree) {
          runs.push(
            await scoreStoredRun(store, r.id, {
              judge,
              suites,
              runsRoot: runsRootOf(io, values.store),
              ...(values['suite-root'] ? { suiteRoot: values['suite-root'] } : {}),
            }),
          );
        } else {
          runs.push({
            runId: r.id,
            suite: r.suite,
            blockId: r.blockId,
            model: r.model ?? r.agent,
            agent: r.agent,
            status: r.status,
            benchmark: r.suite,
            judgeId: 'none',
            options: {},
            summary: {},
            pending: 0,
            unjudged: 0,
            detail: null,
            error: 'not scored yet (run loupe score)',
          });
        }
      }
      await refreshAssistance(store, runs); // issue 20: interventions added since a score was saved count too
      // expert failure analysis (issue 19): Fig. 8, Table 6 and Table 4 forms from resolved annotations
      failures = await failureFigures(
        annotationStoreOf(store),
        taxonomyCatalog(io.cwd).taxonomies,
        values.suite ? { suite: values.suite } : {},
      );
    } finally {
      await store.close();
    }
    runs = runs.filter(Boolean);
    const aggs = await aggregateScores(runs.filter((r) => !r.error));
    // Issue 20: per-run tables and figures show assisted / forked runs under their own label, as the aggregates do.
    const shown = runs.map((r) =>
      r.assistance?.label ? { ...r, model: assistedModel(r.model, r.assistance.label) } : r,
    );
    const model = buildReport(shown, aggs, values.title ?? 'Loupe results');
    // Issue 48: the headline table in the published form, from the same scores (a run not scored is no figure).
    const byRun = new Map(runs.map((r) => [r.runId, r]));
    const headline: SuiteHeadline[] = headlineTables(
      records.map((run) => {
        const s = byRun.get(run.id);
        const score: StoredScore | null =
          s && !s.error
            ? {
                runId: s.runId,
                benchmark: s.benchmark,
                judgeId: s.judgeId,
                options: s.options,
                summary: s.summary,
                detail: s,
                pending: s.pending,
                scoredAt: '',
              }
            : null;
        return { run, score };
      }),
      { seed },
    );
    if (headline.length) model.sections.unshift(headlineSection(headline));
    const failureSection = failures ? failureReportSection(failures) : null;
    if (failureSection) model.sections.push(failureSection);
    const text = format === 'md' ? renderMarkdown(model) : await renderHtml(model);
    if (values['results-json']) {
      writeFileSync(values['results-json'], `${JSON.stringify(resultsFile(headline, model.generatedAt), null, 2)}\n`);
      io.err(
        `wrote ${values['results-json']} (headline figures of ${headline.length} benchmark${headline.length === 1 ? '' : 's'})\n`,
      );
    }
    if (values.out) {
      writeFileSync(values.out, text);
      io.out(`wrote ${values.out} (${runs.length} runs, ${model.sections.length} benchmarks)\n`);
    } else io.out(text);
    return 0;
  },
});
