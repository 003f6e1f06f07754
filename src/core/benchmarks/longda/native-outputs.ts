/**
 * LongDA's own output scored without a store (`loupe score --native-outputs FILE --suite longda`, alias
 * `--longda-answers`): a LongTA results file (`answers_progress.csv`, or any CSV with the benchmark's columns plus
 * `my_answer` and `q_id`) scored against its own answer column or a given `benchmark.csv`. Reads only the files the
 * user names. Source: LongTA `utils.py` (the metrics of `eval.ts`); issue 40 moved it here from `cli/score.ts`.
 */
import { readFileSync } from 'node:fs';
import { LoupeInputError } from '../../util/errors.ts';
import { parseOptionsWithPreset, type OptionSpec } from '../options.ts';
import type { NativeOutputs } from '../types.ts';
import { loadLongdaGroundTruth, longdaOptions, parseLongtaAnswers, scoreLongda } from './eval.ts';

const pct = (x: number | null | undefined) => (x === null || x === undefined ? '—' : (100 * x).toFixed(2));
const num = (x: number | null | undefined, d = 2) => (x === null || x === undefined ? '—' : x.toFixed(d));

/**
 * The LongDA native-output format for {@link NativeOutputs}.
 * @param scoreOptions LongDA's scoring options (its definition's `scoreOptions`).
 * @returns the format: one FILE, optional input `ground-truth` (a `benchmark.csv`).
 */
export function longdaNativeOutputs(scoreOptions: readonly OptionSpec[]): NativeOutputs {
  return {
    help: 'a LongTA results file (answers_progress.csv, or any CSV with the benchmark columns plus my_answer and q_id), scored against its own answer column',
    multiple: false,
    alias: 'longda-answers',
    inputs: [
      {
        name: 'ground-truth',
        value: 'FILE',
        help: "score against this benchmark.csv instead of the file's answer column",
        path: true,
        required: false,
      },
    ],
    root: null,
    async score(o) {
      const path = o.paths[0]!;
      const truthFile = o.inputs['ground-truth'];
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch (e) {
        throw new LoupeInputError(path, 'cannot read the answers file', { cause: e });
      }
      const truth = truthFile ? loadLongdaGroundTruth(truthFile) : undefined;
      const { queries, answers } = parseLongtaAnswers(text, path, truth);
      const opts = longdaOptions(
        parseOptionsWithPreset(scoreOptions, o.preset, o.raw) as Record<string, string | number>,
      );
      const score = scoreLongda(queries, answers, opts);
      const { rows, ...rest } = score;
      const lines = [
        `${path}: ${score.n} queries, ${score.answered} answered`,
        `match ${pct(score.match)}%  coverage ${pct(score.coverage)}%  (strict ${pct(score.matchStrict)}%, structural coverage ${pct(score.coverageStructural)}%)  MAE ${num(score.mae, 3)}`,
        `preset: ${o.preset}   options used (longda): ${Object.entries(score.options)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}`,
      ];
      if (score.changedBy && Object.keys(score.changedBy).length) {
        lines.push(
          `changed by official-code options: ${Object.entries(score.changedBy)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')}`,
        );
      }
      for (const b of score.bySource) {
        lines.push(`  ${b.blockId}: match ${pct(b.match)}%  coverage ${pct(b.coverage)}%  (${b.n})`);
      }
      return {
        json: {
          file: path,
          groundTruth: truthFile ?? "the file's answer column",
          preset: o.preset,
          ...rest,
          queries: rows,
        },
        lines,
        failed: false,
      };
    },
  };
}
