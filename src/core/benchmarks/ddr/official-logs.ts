/**
 * Reads DDR-Bench's own outputs so they can be scored without a Loupe run (issue 21): a log folder as the DDR agents
 * write it (`<prefix>_<entity>/insights*.csv` with an `insight` column, `session_stats*.json` with `final_summary`)
 * and the scenario's `qa.json` (`{ results: [{ entity_id, qa_pairs: [{ question, answer, source_text? }] }] }`).
 * Source: DDR_Bench `evaluate/base_evaluator.py` (`load_qa_data`, `load_logs_data`, `clean_final_summary`) @ cc0aafb0.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { LoupeInputError } from '../../util/errors.ts';
import type { DdrChecklistItem, DdrEntityRun } from './eval.ts';

/** Entity folder prefixes by scenario (DDR `prompts.get_entity_prefix`); GLOBEM uses several patterns. */
const PREFIXES: Record<string, readonly string[]> = {
  mimic: ['patient_'],
  '10k': ['company_'],
  globem: ['user_', 'INS-W_', 'pair_'],
};

/**
 * The final report as DDR keeps it: lines up to the first one containing `- INFO -`, trailing space removed.
 * @param s `final_summary` text. @returns the cleaned report ('' for none).
 */
export function cleanDdrFinalSummary(s: string | null | undefined): string {
  if (!s) return '';
  const out: string[] = [];
  for (const line of s.split('\n')) {
    if (line.includes('- INFO -')) break;
    out.push(line);
  }
  return out.join('\n').trimEnd();
}

/**
 * Reads `qa.json`: checklist items per entity id (entities without items are left out, as DDR does).
 * @throws LoupeInputError naming the file when it cannot be read or has no `results` list.
 */
export function readDdrQa(file: string): Map<string, DdrChecklistItem[]> {
  let data: {
    results?: Array<{
      entity_id?: unknown;
      qa_pairs?: Array<{ question?: string; answer?: string; source_text?: string }>;
    }>;
  };
  try {
    data = JSON.parse(readFileSync(file, 'utf8')) as typeof data;
  } catch (e) {
    throw new LoupeInputError(file, `cannot read the DDR checklist (qa.json): ${(e as Error).message}`, { cause: e });
  }
  if (!Array.isArray(data.results)) throw new LoupeInputError(file, "has no 'results' list (not a DDR qa.json)");
  const out = new Map<string, DdrChecklistItem[]>();
  for (const r of data.results) {
    const pairs = r.qa_pairs ?? [];
    if (r.entity_id === undefined || r.entity_id === null || r.entity_id === '' || !pairs.length) continue;
    out.set(
      String(r.entity_id),
      pairs.map((p) => ({
        question: p.question ?? '',
        answer: p.answer ?? '',
        ...(p.source_text ? { sourceText: p.source_text } : {}),
      })),
    );
  }
  return out;
}

/**
 * Reads a DDR log folder against its `qa.json`: one {@link DdrEntityRun} per entity that has both items and a log
 * folder with insights or a report (DDR evaluates only those; sorted by entity id as DDR does). Insights are given
 * raw, in file order (the scorer drops "NO INSIGHT" and blank ones).
 * @param scenario `mimic` | `10k` | `globem` (folder prefixes). @returns the runs and the entities of qa.json without logs.
 * @throws LoupeInputError naming the folder when it does not exist, or an unreadable file.
 */
export function readDdrLogFolder(
  logsDir: string,
  qaFile: string,
  scenario: string,
): { runs: DdrEntityRun[]; missing: string[] } {
  if (!existsSync(logsDir) || !statSync(logsDir).isDirectory()) {
    throw new LoupeInputError(logsDir, 'is not a DDR log folder');
  }
  const qa = readDdrQa(qaFile);
  const prefixes = PREFIXES[scenario.toLowerCase()] ?? [`${scenario}_`];
  const logs = new Map<string, { insights: string[]; report: string }>();
  for (const name of readdirSync(logsDir).sort()) {
    const dir = join(logsDir, name);
    const prefix = prefixes.find((p) => name.startsWith(p));
    if (!prefix || !statSync(dir).isDirectory()) continue;
    const entity = prefixes[0] === prefix && scenario.toLowerCase() !== 'globem' ? name.slice(prefix.length) : name;
    const files = readdirSync(dir).sort();
    const ins = files.find((f) => /^insights.*\.csv$/.test(f));
    const stats = files.find((f) => /^session_stats.*\.json$/.test(f));
    let insights: string[] = [];
    if (ins) {
      const rows = parseCsv(readFileSync(join(dir, ins), 'utf8'), {
        columns: true,
        skip_empty_lines: false,
        relax_column_count: true,
      }) as Array<Record<string, string>>;
      insights = rows.map((r) => r.insight ?? '');
    }
    let report = '';
    if (stats) {
      try {
        report = cleanDdrFinalSummary(
          (JSON.parse(readFileSync(join(dir, stats), 'utf8')) as { final_summary?: string }).final_summary,
        );
      } catch (e) {
        throw new LoupeInputError(join(dir, stats), `not valid JSON: ${(e as Error).message}`, { cause: e });
      }
    }
    logs.set(entity, { insights, report });
  }
  const runs: DdrEntityRun[] = [];
  const missing: string[] = [];
  for (const id of [...qa.keys()].sort()) {
    const l = logs.get(id);
    if (!l) {
      missing.push(id);
      continue;
    }
    runs.push({ entityId: id, checklist: qa.get(id)!, insights: l.insights, report: l.report });
  }
  return { runs, missing };
}
