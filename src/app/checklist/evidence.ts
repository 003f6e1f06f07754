/**
 * What the checklist editor checks before a version is saved (issue 42 defect 5), host-neutral: every evidence query
 * an item carries is run again in the block's sandboxed database, so a query the database refuses (a `DELETE`, a
 * syntax error) is never saved into a version and a saved result is the result of the saved query; and an expected
 * answer whose numbers contradict its evidence query's result (expected 5, `COUNT(*)` = 10) is reported, to be
 * confirmed by the expert before it is saved.
 */
import { findNumbers, numberMatches } from '../../core/review/numbers.ts';
import type { EditorItem, EvidenceResult } from '../../protocol/checklist.ts';

/** Runs one evidence query (the benchmark's `checklist.evidenceQuery` for the block); throws when it is refused or fails. */
export type EvidenceRunner = (sql: string) => Promise<EvidenceResult>;

/** An item whose expected answer its evidence does not bear out. */
export interface EvidenceContradiction {
  id: string;
  /** `expected "5", but its evidence query returned COUNT(*) = 10` */
  message: string;
}

/** Cells of a result shown in a message: `col = value` for up to three numeric cells. */
function cellsText(r: EvidenceResult): string {
  const out: string[] = [];
  for (const row of r.rows) {
    row.forEach((v, j) => {
      if (out.length < 3 && numericCell(v) !== null) out.push(`${r.columns[j] ?? `column ${j + 1}`} = ${String(v)}`);
    });
    if (out.length >= 3) break;
  }
  return out.join(', ');
}

function numericCell(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string' && /^\s*-?\d+(?:\.\d+)?(?:e[+-]?\d+)?\s*$/i.test(v)) return Number(v);
  return null;
}

/**
 * Whether an item's expected answer contradicts its evidence query's result: the answer states numbers, the result
 * holds numeric cells (first 200 rows), and no number of the answer matches any of them under review's tracing rule
 * (`numberMatches`: the cell rounded to the precision written; percent ↔ fraction). An answer without numbers, or a
 * result without numeric cells, is not judged here (words are the expert's to compare).
 * @returns the contradiction, or null.
 */
export function evidenceContradiction(
  item: Pick<EditorItem, 'id' | 'answer' | 'evidence' | 'retired'>,
): EvidenceContradiction | null {
  const r = item.evidence?.result;
  if (!r || item.retired) return null;
  const written = findNumbers(item.answer ?? '');
  if (!written.length) return null;
  const cells: number[] = [];
  for (const row of r.rows.slice(0, 200)) {
    for (const v of row) {
      const n = numericCell(v);
      if (n !== null) cells.push(n);
    }
  }
  if (!cells.length) return null;
  if (written.some((w) => cells.some((c) => numberMatches(w, c)))) return null;
  return { id: item.id, message: `expected “${item.answer.trim()}”, but its evidence query returned ${cellsText(r)}` };
}

/**
 * Checks items before a save: each evidence query is run again (`run`); a refused or failing one is a problem
 * naming the item (nothing is saved); each result is attached as returned; contradictions are listed.
 * @param items the items to save (retired ones are passed through unchecked).
 * @returns `items` with fresh results, `problems` (refused queries: the save must not happen), `contradictions`
 *   (the save needs the expert's confirmation).
 */
export async function checkEvidence(
  items: readonly EditorItem[],
  run: EvidenceRunner | null,
): Promise<{ items: EditorItem[]; problems: string[]; contradictions: EvidenceContradiction[] }> {
  const problems: string[] = [];
  const out: EditorItem[] = [];
  for (const it of items) {
    const sql = it.evidence?.sql?.trim();
    if (!sql || it.retired) {
      out.push(it);
      continue;
    }
    if (!run) {
      problems.push(`${it.id}: this block has no database, so its evidence query cannot be kept; remove it`);
      out.push(it);
      continue;
    }
    try {
      out.push({ ...it, evidence: { ...it.evidence, sql, result: await run(sql) } });
    } catch (e) {
      problems.push(
        `${it.id}: its evidence query was refused (${e instanceof Error ? e.message : String(e)}); fix or remove it before saving`,
      );
      out.push(it);
    }
  }
  const contradictions = problems.length
    ? []
    : out.map(evidenceContradiction).filter((c): c is EvidenceContradiction => c !== null);
  return { items: out, problems, contradictions };
}
