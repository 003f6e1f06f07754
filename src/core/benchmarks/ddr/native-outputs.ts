/**
 * DDR-Bench's own agent logs scored without a store (`loupe score --native-outputs LOGS_DIR --suite ddr --qa qa.json`,
 * alias `--ddr-logs`): `<prefix>_<entity>/insights*.csv` and `session_stats*.json` against the scenario's `qa.json`,
 * with the judge chosen (recorded verdicts `file:`, or an LLM). Source: DDR-Bench `evaluate/`; issue 40 moved it here
 * from `cli/score.ts`.
 */
import { RecordedJudge } from '../../eval/judges/recorded.ts';
import { formatOptionEcho, parseOptionsWithPreset, type OptionSpec } from '../options.ts';
import type { NativeOutputs } from '../types.ts';
import { ddrOptions, scoreDdrChecklists } from './eval.ts';
import { readDdrLogFolder } from './official-logs.ts';

const pct = (x: number | null | undefined) => (x === null || x === undefined ? '—' : (100 * x).toFixed(2));

/**
 * The DDR-Bench native-output format for {@link NativeOutputs}.
 * @param scoreOptions DDR's scoring options (its definition's `scoreOptions`).
 * @returns the format: one LOGS_DIR, inputs `qa` (required) and `scenario` (default mimic).
 */
export function ddrNativeOutputs(scoreOptions: readonly OptionSpec[]): NativeOutputs {
  return {
    help: "DDR-Bench's own agent logs (<prefix>_<entity>/insights*.csv, session_stats*.json), scored against --qa with the judge (file:, or llm with the --judge-model flags)",
    multiple: false,
    alias: 'ddr-logs',
    inputs: [
      { name: 'qa', value: 'FILE', help: "the scenario's qa.json", path: true, required: true },
      {
        name: 'scenario',
        value: 'mimic|10k|globem',
        help: 'the scenario of the logs',
        path: false,
        required: false,
        default: 'mimic',
      },
    ],
    root: null,
    async score(o) {
      const logs = o.paths[0]!;
      const qa = o.inputs.qa!;
      const scenario = o.inputs.scenario ?? 'mimic';
      const judge = o.judge();
      const opts = ddrOptions({
        ...(parseOptionsWithPreset(scoreOptions, o.preset, o.raw) as Record<string, string | number>),
        scenario,
      });
      const { runs, missing } = readDdrLogFolder(logs, qa, scenario);
      const s = await scoreDdrChecklists(runs, judge, opts);
      const notRecorded = judge instanceof RecordedJudge ? judge.missing.length : 0;
      const json = {
        logs,
        qa,
        judge: judge.id,
        preset: o.preset,
        options: s.options,
        entities: runs.length,
        entitiesWithoutLogs: missing,
        notRecorded,
        messageWise: s.messageWise,
        trajectoryWise: s.trajectoryWise,
        topK: s.topK,
        changedBy: s.changedBy,
        perEntity: s.perEntity.map((e) => ({
          entityId: e.entityId,
          messageWise: {
            included: e.messageWise.included,
            accuracy: e.messageWise.accuracy,
            labels: e.messageWise.items.map((i) => i.officialLabel ?? i.label),
          },
          trajectoryWise: {
            included: e.trajectoryWise.included,
            accuracy: e.trajectoryWise.accuracy,
            labels: e.trajectoryWise.items.map((i) => i.officialLabel ?? i.label),
          },
        })),
      };
      const lines = [
        `${logs}: ${runs.length} entities scored${missing.length ? ` (${missing.length} in qa.json without logs)` : ''}   judge: ${judge.id}   preset: ${o.preset}`,
      ];
      for (const [name, a] of [
        ['message-wise', s.messageWise],
        ['trajectory-wise', s.trajectoryWise],
      ] as const) {
        lines.push(
          `${name}: sample-averaged ${pct(a.sampleAveraged)}%  item-averaged ${pct(a.itemAveraged)}%  (${a.entities} entities, ${a.items} items, ${a.errors} failed)`,
        );
      }
      lines.push(`options used (ddr): ${formatOptionEcho(s.options as unknown as Record<string, unknown>)}`);
      if (Object.keys(s.changedBy).length) {
        lines.push(
          `changed by official-code options: ${Object.entries(s.changedBy)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')}`,
        );
      }
      if (notRecorded) lines.push(`${notRecorded} items had no recorded verdict (failed judgements)`);
      return { json, lines, failed: false };
    },
  };
}
