/**
 * Exports of recorded runs: a JSONL trajectory per run (LongTA's results folder for LongDA is in
 * `benchmarks/longda/results-export.ts`). The API key is never part of a run, so it cannot be exported.
 * Source: issue 5 "Exports"; spec §2.3 (outputs of `run_block` / `main.py`), §2.4.
 */
import type { RunStore } from './types.ts';
import type { AnswerValue } from './records.ts';

/**
 * One run as JSON lines: `run`, then every `step`, `cell` (figures as counts), `answer`, `note`,
 * `code` and `event` record, each `{ "type": ..., ... }`.
 * @returns the JSONL text (ends with a newline).
 * @throws Error when the run does not exist.
 */
export async function exportTrajectoryJsonl(store: RunStore, runId: string): Promise<string> {
  const run = await store.getRun(runId);
  if (!run) throw new Error(`run ${runId} not found in ${store.location}`);
  const lines: unknown[] = [{ type: 'run', ...run }];
  for (const s of await store.getSteps(runId)) lines.push({ type: 'step', ...s });
  for (const { figureCount, ...c } of await store.getCells(runId, { withFigures: false })) {
    lines.push({ type: 'cell', ...c, figures: figureCount ?? 0 });
  }
  for (const a of await store.getAnswers(runId)) lines.push({ type: 'answer', ...a });
  (await store.getNotes(runId)).forEach((content, i) => lines.push({ type: 'note', index: i + 1, content }));
  const code = await store.getSavedCode(runId);
  if (code != null) lines.push({ type: 'code', code });
  for (const e of await store.getEvents(runId)) lines.push({ type: 'event', ...e });
  return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

/** Python `str()` of a number / list of numbers (45 → "45.0"), as LongTA stores `raw_answer`. */
export function pyNumberText(a: AnswerValue): string {
  const one = (x: number) => (Number.isInteger(x) ? `${x}.0` : String(x));
  return Array.isArray(a) ? `[${a.map(one).join(', ')}]` : one(a);
}
