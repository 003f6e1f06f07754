/**
 * A manifest benchmark's native output file scored without a store (`loupe score --native-outputs FILE --suite KIND
 * --root DIR`): one JSON object a line with the item id and the response text (DABench `{id, response}`), matched the
 * way InfiAgent-DABench's `evaluate_responses` does — for each gold row in order, the first response row whose id
 * equals it (Python `==`) and whose response is non-empty; rows of unknown ids are ignored (and counted).
 * Source: issue 44; InfiAgent/InfiAgent `examples/DA-Agent/eval_closed_form.py` (d02d18a).
 */
import { basename } from 'node:path';
import type { NativeOutputs } from '../types.ts';
import { LoupeInputError } from '../../util/errors.ts';
import type { Manifest } from './manifest.ts';
import { readGold, readRows } from './load.ts';
import { aggregateItems, DEFAULT_AGGREGATIONS, scoreItem, type Denominator, type ItemResult } from './eval.ts';
import { idKey } from './load.ts';
import type { OptionValues } from '../options.ts';
import type { PythonScorerInput } from './python-scorer.ts';
import type { JudgedResults } from './judged.ts';
import type { Judge } from '../../eval/judges/types.ts';

/** Python `a == b` for JSON scalars (bool is an int; int and float compare by value). */
function pyEq(a: unknown, b: unknown): boolean {
  const num = (x: unknown): number | undefined =>
    typeof x === 'number' ? x : typeof x === 'boolean' ? (x ? 1 : 0) : undefined;
  const na = num(a);
  const nb = num(b);
  if (na !== undefined || nb !== undefined) return na !== undefined && nb !== undefined && na === nb;
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  return a === null && b === null;
}

/**
 * Scores a native output file against the suite at `root`.
 * @param options resolved scoring options (`denominator`, `round`).
 * @returns item results (gold order; unanswered ones included) and the metrics.
 * @throws LoupeInputError naming `file:line` of a row that is not an object, or whose response is not text.
 */
export async function scoreNativeFile(
  m: Manifest,
  root: string,
  file: string,
  options: OptionValues,
  scoreAll?: (
    inputs: PythonScorerInput[],
    judge?: () => Judge,
    instructionOf?: (id: string) => string,
  ) => Promise<JudgedResults>,
  judge?: () => Judge,
): Promise<{
  results: ItemResult[];
  metrics: ReturnType<typeof aggregateItems>;
  unknownIds: number;
  rows: number;
  pending: number;
  unjudged: number;
}> {
  const spec = m.nativeOutputs!;
  const rows = readRows(file);
  for (const { row, origin } of rows) {
    if (!(spec.id in row)) continue; // Python skips rows without the id key
    if (!(spec.response in row)) {
      throw new LoupeInputError(
        `${file}:${origin.split(':').pop()}`,
        `no field '${spec.response}' (nativeOutputs.response)`,
      );
    }
    const r = row[spec.response];
    if (r !== null && typeof r !== 'string') {
      throw new LoupeInputError(
        `${file}:${origin.split(':').pop()}`,
        `'${spec.response}' must be text or null, got ${JSON.stringify(r)}`,
      );
    }
  }
  const { gold } = readGold(m, root);
  const itemsFile = `${root}/${m.items.file}`;
  const meta = new Map<string, Record<string, unknown>>();
  const instructions = new Map<string, string>();
  for (const { row } of readRows(itemsFile)) {
    instructions.set(
      idKey(row[m.items.id]),
      typeof row[m.items.instruction] === 'string' ? (row[m.items.instruction] as string) : '',
    );
    const md: Record<string, unknown> = {};
    for (const f of m.items.metadata ?? []) if (f in row) md[f] = row[f];
    const k = idKey(row[m.items.id]);
    if (!meta.has(k)) meta.set(k, md);
  }
  const inputs: PythonScorerInput[] = [];
  for (const [id, g] of gold) {
    const hit = rows.find(
      ({ row }) =>
        spec.id in row &&
        typeof row[spec.response] === 'string' &&
        row[spec.response] !== '' &&
        pyEq(row[spec.id], g.idRaw),
    );
    inputs.push({
      id,
      response: hit ? (hit.row[spec.response] as string) : '',
      gold: { answers: g.answers },
      metadata: meta.get(id) ?? {},
    });
  }
  const scored = scoreAll
    ? await scoreAll(inputs, judge, (id) => instructions.get(id) ?? '')
    : {
        results: inputs.map((i) => scoreItem(i.id, i.response, i.gold, m.scoring, i.metadata)),
        pending: 0,
        unjudged: 0,
      };
  const results = scored.results;
  const unknownIds = rows.filter(
    ({ row }) => spec.id in row && ![...gold.values()].some((g) => pyEq(row[spec.id], g.idRaw)),
  ).length;
  const metrics = aggregateItems(
    results,
    m.scoring.aggregations ?? DEFAULT_AGGREGATIONS,
    options.denominator as Denominator,
    typeof options.round === 'number' && options.round >= 0 ? options.round : undefined,
  );
  return { results, metrics, unknownIds, rows: rows.length, pending: scored.pending, unjudged: scored.unjudged };
}

/** The native-output format of a manifest, or null when it declares none. */
export function manifestNativeOutputs(
  m: Manifest,
  resolveOptions: (raw: Readonly<Record<string, string>>, preset: 'official' | 'paper') => OptionValues,
  scoreAll?: (
    inputs: PythonScorerInput[],
    judge?: () => Judge,
    instructionOf?: (id: string) => string,
  ) => Promise<JudgedResults>,
): NativeOutputs | null {
  if (!m.nativeOutputs) return null;
  const spec = m.nativeOutputs;
  return {
    help: spec.help ?? `${m.title} responses: JSONL, one {"${spec.id}": ..., "${spec.response}": "..."} a line`,
    multiple: false,
    alias: null,
    inputs: [],
    root: `the ${m.title} data folder (holding ${m.items.file} and ${m.gold.file})`,
    async score(o) {
      if (!o.root) {
        throw new LoupeInputError(
          'root',
          `scoring ${m.title} responses needs the data folder (${m.items.file}, ${m.gold.file})`,
        );
      }
      const file = o.paths[0]!;
      const options = resolveOptions(o.raw, o.preset);
      const r = await scoreNativeFile(m, o.root, file, options, scoreAll, o.judge);
      const fmt = (v: number | null): string => (v === null ? 'n/a' : `${(v * 100).toFixed(2)}%`);
      const lines = [
        `${basename(file)}: ${r.rows} responses, ${r.metrics.counted} of ${r.metrics.items} questions counted (denominator ${String(options.denominator)}, preset ${o.preset})${r.unknownIds ? `; ${r.unknownIds} rows of unknown ids ignored` : ''}${r.pending ? `; ${r.pending} judgements pending (a human judge): the rates are partial` : ''}${r.unjudged ? `; ${r.unjudged} judgements failed` : ''}`,
        ...(m.scoring.aggregations ?? DEFAULT_AGGREGATIONS)
          .filter((a) => a.kind !== 'by-field' && a.kind !== 'by-field-count')
          .map((a) => `  ${a.label ?? a.metric}: ${fmt(r.metrics.summary[a.metric] ?? null)}`),
        ...Object.entries(r.metrics.summary)
          .filter(([k]) => !(m.scoring.aggregations ?? DEFAULT_AGGREGATIONS).some((a) => a.metric === k))
          .map(([k, v]) => `  ${k}: ${fmt(v)}`),
        ...Object.entries(r.metrics.breakdowns).flatMap(([k, b]) => [
          `  ${k}:`,
          ...Object.entries(b).map(([v, x]) => `    ${v}: ${fmt(x)}`),
        ]),
      ];
      return {
        json: {
          file,
          root: o.root,
          preset: o.preset,
          options,
          pending: r.pending,
          unjudged: r.unjudged,
          summary: r.metrics.summary,
          breakdowns: r.metrics.breakdowns,
          counted: r.metrics.counted,
          questions: r.metrics.items,
          unknownIds: r.unknownIds,
          items: r.results,
        },
        lines,
        failed: false,
      };
    },
  };
}
