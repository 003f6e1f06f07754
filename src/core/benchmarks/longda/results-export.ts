/**
 * LongTA's results folder for LongDA runs (`answers_progress.csv`, `run_summary.json`, plus `codes.json`,
 * `notes.json`, `tool_usage.json`, `block_metrics.json`, `messages/<block_id>.json`) so LongDA's own
 * `evaluate_results.py --csv` and Loupe's evaluator can score it (`loupe run --results`). Moved from
 * `store/export.ts` (issue 40: LongDA's item type is named only in its folder).
 * Source: issue 5 "Exports"; spec §2.3 (outputs of `run_block` / `main.py`), §2.4.
 */
import { stringify } from 'csv-stringify/sync';
import { ensureFolder, writeContainedFile } from '../../util/contained.ts';
import type { Block } from '../../suites/types.ts';
import type { RunStore } from '../../store/types.ts';
import { pyNumberText } from '../../store/export.ts';
import type { LongdaQuery } from './items.ts';
import { answerStructureText } from './parse.ts';

/** What {@link exportLongdaResults} wrote. */
export interface LongdaResultsSummary {
  dir: string;
  blocks: number;
  queries: number;
  answered: number;
}

/**
 * Writes LongTA's results folder for a set of LongDA runs (one run per block; for repeats, export each
 * repeat separately).
 * @param store the run store; `runs` pairs of run id and its block (from `loadSuite('longda', root)`).
 * @param outDir created if needed.
 * @returns counts written.
 * @throws Error when a run is missing or two runs share a block.
 */
export async function exportLongdaResults(
  store: RunStore,
  runs: { runId: string; block: Block }[],
  outDir: string,
): Promise<LongdaResultsSummary> {
  // the results folder is the user's; files below it are written contained (no link planted there is followed)
  ensureFolder(outDir);
  const header = [
    'survey',
    'source',
    'internal_id',
    'query',
    'answer_structure',
    'additional_info',
    'answer',
    'my_answer',
    'q_id',
  ];
  const records: string[][] = [header];
  const codes: Record<string, string> = {};
  const notes: Record<string, string[]> = {};
  const toolUsage: Record<string, number> = {};
  const blockMetrics: Record<string, unknown> = {};
  const seen = new Set<string>();
  let queries = 0;
  let answered = 0;
  let totIn = 0;
  let totOut = 0;
  let totSteps = 0;
  let totMs = 0;
  const models = new Set<string>();
  for (const { runId, block } of runs) {
    const run = await store.getRun(runId);
    if (!run) throw new Error(`run ${runId} not found in ${store.location}`);
    if (seen.has(block.id)) throw new Error(`two runs for block ${block.id}: export repeats separately`);
    seen.add(block.id);
    const survey = block.longda?.survey ?? '';
    const source = block.longda?.source ?? block.title;
    const blockKey = `${survey}_${source}`;
    const answers = new Map((await store.getAnswers(runId)).map((a) => [a.queryId, a]));
    for (const q of block.items.filter((i): i is LongdaQuery => i.type === 'longda-query')) {
      queries++;
      const a = answers.get(q.longdaId);
      if (a) answered++;
      const structure = answerStructureText(q.answerStructure);
      records.push([
        survey,
        source,
        String(q.internalId),
        q.question,
        structure,
        q.additionalInfo === '' ? 'NA.' : q.additionalInfo,
        q.answerText,
        a ? pyNumberText(a.answer) : '',
        q.longdaId,
      ]);
    }
    const code = await store.getSavedCode(runId);
    if (code != null) codes[blockKey] = code;
    notes[blockKey] = await store.getNotes(runId);
    const steps = await store.getSteps(runId);
    for (const s of steps) for (const t of s.toolCalls) toolUsage[t.name] = (toolUsage[t.name] ?? 0) + 1;
    writeContainedFile(outDir, `messages/${blockKey.replace(/[/\\]/g, '_')}.json`, JSON.stringify(steps, null, 2));
    blockMetrics[blockKey] = {
      run_id: runId,
      status: run.status,
      status_reason: run.statusReason,
      steps: run.steps,
      tokens: run.tokens
        ? { input: run.tokens.input, output: run.tokens.output, total: run.tokens.input + run.tokens.output }
        : null,
      duration_seconds: run.durationMs / 1000,
    };
    totIn += run.tokens?.input ?? 0;
    totOut += run.tokens?.output ?? 0;
    totSteps += run.steps;
    totMs += run.durationMs;
    if (run.model) models.add(run.model);
  }
  // csv-stringify: quotes a field only when it holds a comma, quote or line break (as pandas' to_csv does)
  writeContainedFile(outDir, 'answers_progress.csv', stringify(records, { record_delimiter: '\n' }));
  writeContainedFile(outDir, 'codes.json', JSON.stringify(codes, null, 2));
  writeContainedFile(outDir, 'notes.json', JSON.stringify(notes, null, 2));
  writeContainedFile(outDir, 'tool_usage.json', JSON.stringify(toolUsage, null, 2));
  writeContainedFile(outDir, 'block_metrics.json', JSON.stringify(blockMetrics, null, 2));
  const n = runs.length;
  writeContainedFile(
    outDir,
    'run_summary.json',
    JSON.stringify(
      {
        model: [...models].join(', '),
        n_blocks: n,
        total_queries: queries,
        answered_queries: answered,
        total_tokens: { input: totIn, output: totOut, total: totIn + totOut },
        total_steps: totSteps,
        average_steps_per_block: n ? totSteps / n : 0,
        total_seconds: totMs / 1000,
        total_hours: totMs / 3_600_000,
        tool_usage_counts: toolUsage,
        run_ids: runs.map((r) => r.runId),
      },
      null,
      2,
    ),
  );
  return { dir: outDir, blocks: n, queries, answered };
}
