/**
 * Retrieval evaluation (issue 25): recall@k, MRR and nDCG@k of the files a question needs, for a
 * labels file of `{ q, files }` entries. LongDA labels may instead identify the question by
 * `{ survey, source, internal_id }` of `benchmark.csv` (the benchmark's text stays out of the repository);
 * those are resolved against the benchmark folder.
 * Source: Manning, Raghavan & Schütze, "Introduction to Information Retrieval" §8.4 (recall, MRR, nDCG with binary gains).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { LoupeInputError } from '../util/errors.ts';

/** One labelled question: its text and the files (relative to the docs root) it needs. */
export interface RetrievalLabel {
  q: string;
  files: string[];
  /** Publication / group the question comes from (for tuning / held-back splits). */
  source?: string;
  id?: string;
  /** Survey folder the question belongs to (its `survey` field, else the first path component of its files). */
  survey?: string;
}

/** Metrics over a set of labelled questions. */
export interface RetrievalMetrics {
  questions: number;
  k: number;
  recallAtK: number;
  mrr: number;
  ndcgAtK: number;
}

interface RawLabel {
  q?: unknown;
  files?: unknown;
  survey?: unknown;
  source?: unknown;
  internal_id?: unknown;
  id?: unknown;
}

/**
 * Reads a labels file: `{ questions: [...] }` or a bare array; each entry `{ q, files }` or
 * `{ survey, source, internal_id, files }` (question = `query` + " " + `additional_info` of the
 * matching `benchmark.csv` row in `benchmarkDir`). `survey` and `id` are kept when present (the survey
 * defaults to the first path component of the entry's first file).
 * @param path labels JSON; `benchmarkDir` folder holding `benchmark.csv` (needed only for id-only entries);
 *   `text` `query` to use the question alone (without `additional_info`, the definitions and notes).
 * @returns labels in file order.
 * @throws LoupeInputError naming the file and entry when an entry has no files, no question, or an unknown id.
 */
export function loadRetrievalLabels(
  path: string,
  benchmarkDir?: string,
  text: 'query+info' | 'query' = 'query+info',
): RetrievalLabel[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new LoupeInputError(path, `not a readable JSON labels file (${(e as Error).message})`);
  }
  const list = Array.isArray(raw) ? raw : (raw as { questions?: unknown }).questions;
  if (!Array.isArray(list)) throw new LoupeInputError(path, 'expected an array of labels or { "questions": [...] }');
  let rows: Map<string, { query: string; additional_info: string }> | undefined;
  const rowsOf = () => {
    if (rows) return rows;
    const csv = benchmarkDir ? join(benchmarkDir, 'benchmark.csv') : '';
    if (!csv || !existsSync(csv)) {
      throw new LoupeInputError(
        path,
        `entries without "q" need the LongDA benchmark folder holding benchmark.csv (not found: ${csv || 'no folder given'})`,
      );
    }
    const recs = parse(readFileSync(csv), { columns: true, skip_empty_lines: true }) as Array<Record<string, string>>;
    rows = new Map(
      recs.map((r) => [
        `${r.survey}#${r.source}#${r.internal_id}`,
        { query: r.query ?? '', additional_info: r.additional_info ?? '' },
      ]),
    );
    return rows;
  };
  return list.map((e: RawLabel, i) => {
    const where = `${path} entry ${i + 1}`;
    if (!Array.isArray(e.files) || !e.files.length || !e.files.every((f) => typeof f === 'string')) {
      throw new LoupeInputError(where, '"files" must be a non-empty array of paths');
    }
    const files = e.files as string[];
    const survey = typeof e.survey === 'string' && e.survey ? e.survey : files[0]!.split('/')[0]!;
    if (typeof e.q === 'string' && e.q.trim()) {
      return {
        q: e.q,
        files,
        survey,
        ...(typeof e.source === 'string' ? { source: e.source } : {}),
        ...(typeof e.id === 'string' ? { id: e.id } : {}),
      };
    }
    if (typeof e.survey !== 'string' || typeof e.source !== 'string' || e.internal_id === undefined) {
      throw new LoupeInputError(where, 'needs "q" or "survey", "source" and "internal_id"');
    }
    const key = `${e.survey}#${e.source}#${String(e.internal_id)}`;
    const row = rowsOf().get(key);
    if (!row) {
      throw new LoupeInputError(where, `no benchmark.csv row for ${e.survey} / ${e.source} / ${String(e.internal_id)}`);
    }
    return {
      q: (text === 'query' ? row.query : `${row.query} ${row.additional_info}`).trim(),
      files,
      source: e.source,
      id: key,
      survey,
    };
  });
}

/**
 * Scores rankings against labels.
 * @param labels labelled questions; `rank(q)` returns files best first (at least `k` when available).
 * @param k cut-off (≥ 1). `drop(file)` removes needed files from the labels (e.g. the demographics file);
 *   questions left without a needed file are not counted.
 * @returns mean recall@k, MRR (1/rank of the first needed file, 0 when absent from the ranking) and nDCG@k.
 */
export function evaluateRetrieval(
  labels: readonly RetrievalLabel[],
  rank: (q: string) => string[],
  k: number,
  drop?: (file: string) => boolean,
): RetrievalMetrics {
  let n = 0;
  let recall = 0;
  let mrr = 0;
  let ndcg = 0;
  for (const l of labels) {
    const need = new Set(l.files.filter((f) => !drop?.(f)));
    if (!need.size) continue;
    const ranked = rank(l.q).filter((f) => !drop?.(f));
    n++;
    const topk = ranked.slice(0, k);
    recall += topk.filter((f) => need.has(f)).length / need.size;
    const first = ranked.findIndex((f) => need.has(f));
    mrr += first >= 0 ? 1 / (first + 1) : 0;
    let dcg = 0;
    topk.forEach((f, i) => {
      if (need.has(f)) dcg += 1 / Math.log2(i + 2);
    });
    let ideal = 0;
    for (let i = 0; i < Math.min(need.size, k); i++) ideal += 1 / Math.log2(i + 2);
    ndcg += dcg / ideal;
  }
  const r = (x: number) => (n ? Number((x / n).toFixed(3)) : 0);
  return { questions: n, k, recallAtK: r(recall), mrr: r(mrr), ndcgAtK: r(ndcg) };
}
