/**
 * Issue 21: Loupe's scorers under `--preset official` equal the benchmarks' own code on fixtures written for this
 * test (test/fixtures/official-parity/*; expected values produced by running the official code, see each README),
 * and `--preset paper` gives the paper's / corrected values where they differ.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseLongtaAnswers, longdaOptions, scoreLongda } from '../../../../src/core/benchmarks/longda/eval.ts';
import { getBenchmark } from '../../../../src/core/benchmarks/registry.ts';
import { parseOptionsWithPreset, optionPresetHelpLines, parsePreset } from '../../../../src/core/benchmarks/options.ts';
import { presetOf } from '../../../../src/core/eval/run-score.ts';
import { LoupeInputError } from '../../../../src/core/util/errors.ts';

const FIX = join(import.meta.dirname, '../../../fixtures/official-parity');
const readJson = <T>(p: string): T => JSON.parse(readFileSync(join(FIX, p), 'utf8')) as T;
const num = (x: number | string | null): number | null => (x === null ? null : typeof x === 'string' ? Number(x) : x);
const close = (a: number | null | undefined, b: number | null, what: string) => {
  if (b === null || a === null || a === undefined) return assert.equal(a ?? null, b, what);
  if (!Number.isFinite(b)) return assert.equal(a, b, what);
  assert.ok(Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);
};

describe('scoring presets (issue 21)', () => {
  it('resolves defaults, then the preset, then individual options; unknown presets and options are named', () => {
    const specs = getBenchmark('ddr').scoreOptions;
    const off = parseOptionsWithPreset(specs, 'official', {});
    assert.equal(off.empty_insights, 'drop');
    assert.equal(off.failed_judgements, 'count');
    assert.equal(off.unparsed_reply, 'substring');
    assert.equal(off.label_case, 'exact');
    const paper = parseOptionsWithPreset(specs, 'paper', { label_case: 'exact' });
    assert.equal(paper.empty_insights, 'zero');
    assert.equal(paper.label_case, 'exact', 'an individual option overrides the preset');
    assert.throws(
      () => parsePreset('offical', '--preset'),
      (e: unknown) => e instanceof LoupeInputError && e.subject === '--preset' && /official, paper/.test(e.message),
    );
    assert.throws(
      () => parseOptionsWithPreset(specs, 'official', { nope: '1' }),
      (e: unknown) => e instanceof LoupeInputError && /nope/.test(e.subject),
    );
    assert.equal(parsePreset(undefined), 'official');
  });

  it("help lists each option's official and paper values", () => {
    const lines = optionPresetHelpLines(getBenchmark('blade').scoreOptions);
    assert.ok(
      lines.some((l) => /unweighted_formula=code\|paper \(official code, paper paper\)/.test(l)),
      lines.join('\n'),
    );
    assert.ok(lines.some((l) => /model_coverage_denominator=/.test(l)));
    assert.ok(
      optionPresetHelpLines(getBenchmark('blade-mcq').scoreOptions).some((l) =>
        /mcq_parsing=strict\|blade \(official blade, paper strict\)/.test(l),
      ),
    );
  });

  it('a score stored before presets is labelled legacy', () => {
    assert.equal(presetOf({ options: { tolerance: 0.05 } }), 'legacy');
    assert.equal(presetOf({ options: { preset: 'paper' } }), 'paper');
    assert.equal(presetOf({ preset: 'official', options: {} }), 'official');
  });
});

describe('LongDA equals LongDA metric.py (fixture longda/)', () => {
  const text = readFileSync(join(FIX, 'longda/answers_progress.csv'), 'utf8');
  const exp = readJson<{
    rows: Array<{
      q_id: string;
      coverage: number;
      match: number;
      abs_error: number | string | null;
      pct_error: number | string | null;
    }>;
    overall: Record<string, number | string | null>;
  }>('longda/expected.json');
  const { queries, answers } = parseLongtaAnswers(text);
  const spec = getBenchmark('longda').scoreOptions;

  it('official preset: identical per-row verdicts and every aggregate to 1e-12 (inf MAE included)', () => {
    const s = scoreLongda(
      queries,
      answers,
      longdaOptions(parseOptionsWithPreset(spec, 'official', {}) as Record<string, string | number>),
    );
    assert.equal(s.rows.length, exp.rows.length);
    s.rows.forEach((r, i) => {
      const e = exp.rows[i]!;
      assert.equal(r.qId, e.q_id);
      assert.equal(r.coverage, e.coverage, `${e.q_id} coverage`);
      close(r.match, e.match, `${e.q_id} match`);
      close(r.coverageComparable ? (r.absErr ?? null) : null, num(e.abs_error), `${e.q_id} abs_error`);
      close(r.coverageComparable ? (r.pctErr ?? null) : null, num(e.pct_error), `${e.q_id} pct_error`);
    });
    close(100 * s.coverage, num(exp.overall.coverage_rate!), 'coverage_rate');
    close(100 * s.match, num(exp.overall.match_rate!), 'match_rate');
    assert.equal(s.mae, Infinity);
    assert.equal(s.mae, num(exp.overall.mean_absolute_error!));
    assert.equal(s.mpe, num(exp.overall.mean_percentage_error!));
    assert.deepEqual(s.changedBy, { infinite_mae: 1 });
  });

  it('every ± / +- is stripped, Unicode digits parse, a one-element list is not a number (as LongDA)', () => {
    const s = scoreLongda(queries, answers);
    const row = (id: string) => s.rows.find((r) => r.qId === id)!;
    assert.deepEqual(row('nhis_adult_q3').given, [49, 51.2]);
    assert.equal(row('nhis_adult_q4').given, 61950);
    assert.equal(row('nhis_adult_q6').given, 12);
    assert.equal(row('nhis_adult_q7').given, 12.5);
    assert.equal(row('nhis_adult_q5').coverage, 0);
  });

  it('paper preset: infinite errors leave MAE, list and coverage definitions follow the paper', () => {
    const s = scoreLongda(
      queries,
      answers,
      longdaOptions(parseOptionsWithPreset(spec, 'paper', {}) as Record<string, string | number>),
    );
    const finite = exp.rows.filter((r) => r.coverage && typeof r.abs_error === 'number');
    close(
      s.mae,
      finite.reduce((a, r) => a + (r.abs_error as number), 0) / finite.length,
      'mae without the infinite row',
    );
    assert.equal(s.options.list_scoring, 'strict');
    assert.equal(s.options.coverage, 'structural');
    assert.deepEqual(s.changedBy, {});
  });
});

describe('DDR-Bench equals DDR evaluate/ on its own log folder + qa.json (fixture ddr/)', async () => {
  const { scoreDdrChecklists, ddrOptions } = await import('../../../../src/core/benchmarks/ddr/eval.ts');
  const { readDdrLogFolder } = await import('../../../../src/core/benchmarks/ddr/official-logs.ts');
  const { extractJson, relaxToSchema, validateSchema } = await import('../../../../src/core/eval/judges/schema.ts');
  const { taskDef } = await import('../../../../src/core/eval/judges/tasks.ts');
  type Ctx = { message_wise: Array<string | null>; chat_wise: Array<string | null> };
  const replies = readJson<Record<string, Ctx>>('ddr/replies.json');
  const exp = readJson<{
    overall_statistics: Record<
      'message_wise_context' | 'chat_wise_context',
      {
        average_correct_percentage: number;
        overall_correct_percentage: number;
        total_questions: number;
        total_correct: number;
      }
    >;
    cumulative_message_statistics: {
      stats_by_threshold: Record<
        string,
        { correct_percentage: number; incorrect_percentage: number; insufficient_percentage: number }
      >;
    };
    entity_results: Array<{
      entity_id: string;
      message_wise_context_results: Array<{ context_quality: string }>;
      chat_wise_context_results: Array<{ context_quality: string }>;
    }>;
  }>('ddr/expected.json');
  /** Replays the recorded replies through Loupe's own reply reading (as the LLM judge reads a reply, no retry). */
  const replay = {
    id: 'llm:replay',
    async judge(task: string, input: unknown, ctx?: { itemRef?: string }) {
      const m = /^entity (\S+) \/ item (\d+) \/ (message|trajectory)-wise$/.exec(ctx?.itemRef ?? '')!;
      const raw = replies[m[1]!]![m[3] === 'message' ? 'message_wise' : 'chat_wise'][Number(m[2])] ?? null;
      const base = {
        key: ctx!.itemRef!,
        task,
        judgeId: 'llm:replay',
        inputHash: '',
        promptHash: null,
        input,
        raw,
        at: '',
      };
      if (raw === null) return { ...base, verdict: null, status: 'error', error: 'model call failed' };
      const def = taskDef('checklist-support');
      const x = extractJson(raw);
      const p = x === undefined ? undefined : relaxToSchema(x, def.schema);
      return p !== undefined && !validateSchema(p, def.schema).length
        ? { ...base, verdict: def.coerce(p), status: 'done' }
        : { ...base, verdict: null, status: 'error', error: 'invalid reply' };
    },
  } as unknown as import('../../../../src/core/eval/judges/types.ts').Judge;
  const { runs, missing } = readDdrLogFolder(join(FIX, 'ddr/logs'), join(FIX, 'ddr/qa.json'), 'mimic');
  const spec = getBenchmark('ddr').scoreOptions;
  const score = async (preset: 'official' | 'paper') =>
    scoreDdrChecklists(
      runs,
      replay,
      ddrOptions(parseOptionsWithPreset(spec, preset, {}) as Record<string, string | number>),
    );

  it('reads the log folder as DDR does (NO INSIGHT and blanks dropped, report cut at "- INFO -", unlogged entity left out)', () => {
    assert.deepEqual(
      runs.map((r) => r.entityId),
      ['1001', '1002', '1003'],
    );
    assert.deepEqual(missing, ['1004']);
    assert.equal(runs[0]!.report, 'FINISH: heart rate 88 bpm; lactate 3.1; creatinine rising to 1.6.');
  });

  it('official preset: identical per-item labels, sample/item averages and top-k curve to 1e-12', async () => {
    const s = await score('official');
    const byId = new Map(s.perEntity.map((e) => [e.entityId, e]));
    for (const er of exp.entity_results) {
      const e = byId.get(er.entity_id)!;
      const lab = (q: string) =>
        q === 'CORRECT_INFO'
          ? 'CORRECT_INFO'
          : q === 'INCORRECT_INFO'
            ? 'INCORRECT_INFO'
            : q === 'API_FAILED'
              ? 'failed'
              : 'not-correct-not-incorrect';
      const mine = (it: { label: string | null; status: string }) =>
        it.status === 'error'
          ? 'failed'
          : it.label === 'CORRECT_INFO' || it.label === 'INCORRECT_INFO'
            ? it.label
            : 'not-correct-not-incorrect';
      assert.deepEqual(
        e.messageWise.included ? e.messageWise.items.map(mine) : [],
        er.message_wise_context_results.map((r) => lab(r.context_quality)),
        `${er.entity_id} message-wise`,
      );
      assert.deepEqual(
        e.trajectoryWise.included ? e.trajectoryWise.items.map(mine) : [],
        er.chat_wise_context_results.map((r) => lab(r.context_quality)),
        `${er.entity_id} chat-wise`,
      );
    }
    const o = exp.overall_statistics;
    close(
      100 * s.messageWise.sampleAveraged!,
      o.message_wise_context.average_correct_percentage,
      'message-wise sample-averaged',
    );
    close(
      100 * s.messageWise.itemAveraged!,
      o.message_wise_context.overall_correct_percentage,
      'message-wise item-averaged',
    );
    close(
      100 * s.trajectoryWise.sampleAveraged!,
      o.chat_wise_context.average_correct_percentage,
      'chat-wise sample-averaged',
    );
    close(
      100 * s.trajectoryWise.itemAveraged!,
      o.chat_wise_context.overall_correct_percentage,
      'chat-wise item-averaged',
    );
    assert.equal(s.messageWise.items, o.message_wise_context.total_questions);
    assert.equal(s.trajectoryWise.items, o.chat_wise_context.total_questions);
    for (const p of s.topK) {
      const e = exp.cumulative_message_statistics.stats_by_threshold[`top_${p.k}`]!;
      close(100 * p.correct, e.correct_percentage, `top_${p.k} correct`);
      close(100 * p.incorrect, e.incorrect_percentage, `top_${p.k} incorrect`);
      close(100 * p.insufficient, e.insufficient_percentage, `top_${p.k} insufficient`);
    }
    // item 13 flipped one verdict (INCORRECT_INFO read as correct); item 14: `correct_info` and `Insufficient_Info` uncounted, one of them changed
    assert.equal(s.changedBy.unparsed_reply, 2);
    assert.equal(s.changedBy.label_case, 1);
  });

  it('paper preset: the non-JSON replies fail, lower-case labels are read, failures and empty entities as the paper says', async () => {
    const s = await score('paper');
    const e1 = s.perEntity.find((e) => e.entityId === '1001')!;
    assert.deepEqual(
      e1.messageWise.items.map((i) => i.label),
      ['CORRECT_INFO', null, 'CORRECT_INFO', 'INSUFFICIENT_INFO'],
    );
    assert.equal(e1.messageWise.accuracy, 2 / 3);
    assert.equal(e1.trajectoryWise.accuracy, 1 / 2, 'failed call and unparsed reply leave the denominator');
    assert.deepEqual(s.changedBy, {});
    // 1002 has no valid insight: 0 under empty_insights=zero; message-wise average over 1001, 1002, 1003
    close(s.messageWise.sampleAveraged, (2 / 3 + 0 + 2 / 3) / 3, 'paper sample-averaged');
  });
});

describe('BLADE equals blade_bench final_metrics on run order, F1 and the unweighted score (fixture blade/)', async () => {
  const { aggregateBlade, METRIC_TYPES } = await import('../../../../src/core/benchmarks/blade/eval/metrics.ts');
  type Raw = {
    k: number;
    datasets: Array<{
      dataset: string;
      gt: { numCvars: number; numMspecs: number; numMspecsUnique: number; numTspecs: number };
      runs: Array<{
        status: 'ok' | 'generation_failed';
        precision?: Record<string, number>;
        items?: Record<string, string[]>;
      }>;
    }>;
  };
  const raw = readJson<Raw>('blade/runs.json');
  const exp = readJson<{
    noModelCvar: { weighted: string | number; unweighted: string | number };
    precision: Record<string, number>;
    coverage: Record<string, number>;
    weighted: number;
    unweighted: number;
  }>('blade/expected.json');
  const datasets = (drop: boolean) =>
    raw.datasets.map((d) => ({
      dataset: d.dataset,
      gt: d.gt,
      runs: d.runs.map((r) => ({
        status: r.status,
        metrics: Object.fromEntries(
          METRIC_TYPES.map((t) => {
            const items = drop && t === 'modelCvar' ? [] : (r.items?.[t] ?? []);
            return [
              t,
              {
                gtItems: items,
                gtNames: items,
                precision: drop && t === 'modelCvar' ? 0 : (r.precision?.[t] ?? 0),
                matched: 0,
                denominator: 0,
              },
            ];
          }),
        ) as never,
      })),
    }));
  const opts = (preset: 'official' | 'paper') => {
    const o = parseOptionsWithPreset(getBenchmark('blade').scoreOptions, preset, {});
    return {
      k: raw.k,
      samples: 1,
      seed: 0,
      failedRuns: o.failed_runs as 'zero' | 'drop',
      coverageKey: o.coverage_key as 'id' | 'name',
      modelCoverageDenominator: o.model_coverage_denominator as 'code' | 'paper',
      generationFailures: o.generation_failures as 'append' | 'in-place',
      unweightedFormula: o.unweighted_formula as 'code' | 'paper',
      f1ZeroGuard: o.f1_zero !== 'nan',
    };
  };

  it('official preset: precision, coverage@k (failures appended), weighted and unweighted scores to 1e-12', () => {
    const a = aggregateBlade(datasets(false), opts('official'));
    for (const t of METRIC_TYPES) {
      close(a.point.perType[t].precision, exp.precision[t]!, `${t} precision`);
      close(a.point.perType[t].coverage, exp.coverage[t]!, `${t} coverage`);
    }
    close(a.point.weightedF1, exp.weighted, 'weighted');
    close(a.point.unweightedF1, exp.unweighted, 'unweighted (+ 0.5 +)');
    assert.deepEqual(
      a.changedBy,
      { generation_failures: 3 },
      'three generation failures stood before a successful run',
    );
  });

  it('official preset: F1 with precision = coverage = 0 is NaN, and so are the scores', () => {
    const a = aggregateBlade(datasets(true), opts('official'));
    assert.ok(Number.isNaN(a.point.perType.modelCvar.f1));
    assert.equal(String(a.point.weightedF1), String(exp.noModelCvar.weighted));
    assert.equal(String(a.point.unweightedF1), String(exp.noModelCvar.unweighted));
  });

  it('paper preset: failures keep their place, F1 0 when P = C = 0, the unweighted formula as written', () => {
    const a = aggregateBlade(datasets(false), opts('paper'));
    const f = a.point.perType;
    close(
      a.point.unweightedF1,
      (f.cvar.f1 + f.model.f1 + f.modelCvar.f1 + 0.5 * f.transformGraph.f1 + 0.5 * f.transformValue.f1) / 4,
      'paper unweighted',
    );
    assert.ok(f.cvar.coverage < exp.coverage.cvar!, 'in place, a failure inside the first k lowers coverage@k');
    assert.deepEqual(a.changedBy, {});
    const z = aggregateBlade(datasets(true), opts('paper'));
    assert.equal(z.point.perType.modelCvar.f1, 0);
    assert.ok(Number.isFinite(z.point.weightedF1));
  });
});

describe("loupe score --ddr-logs with --judge file: (DDR's own outputs re-scored without a model)", async () => {
  const { main } = await import('../../../../src/cli/main.ts');
  const { RecordedJudge } = await import('../../../../src/core/eval/judges/recorded.ts');
  const run = async (args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const rc = await main(
      ['score', '--ddr-logs', 'logs', '--qa', 'qa.json', '--judge', 'file:verdicts.jsonl', ...args],
      { out: (s: string) => out.push(s), err: (s: string) => err.push(s), env: {}, cwd: join(FIX, 'ddr') } as never,
    );
    return { rc, out: out.join(''), err: err.join('') };
  };
  const exp = readJson<{
    overall_statistics: Record<
      'message_wise_context' | 'chat_wise_context',
      { average_correct_percentage: number; overall_correct_percentage: number }
    >;
    cumulative_message_statistics: { stats_by_threshold: Record<string, { correct_percentage: number }> };
  }>('ddr/expected.json');

  it('matches DDR evaluate/ on the same replies under the default (official) preset', async () => {
    const r = await run(['--json']);
    assert.equal(r.rc, 0, r.err);
    const j = JSON.parse(r.out) as {
      preset: string;
      judge: string;
      entities: number;
      entitiesWithoutLogs: string[];
      notRecorded: number;
      changedBy: Record<string, number>;
      messageWise: { sampleAveraged: number; itemAveraged: number };
      trajectoryWise: { sampleAveraged: number; itemAveraged: number };
      topK: Array<{ k: number; correct: number }>;
      perEntity: Array<{ entityId: string; messageWise: { labels: string[] } }>;
    };
    assert.equal(j.preset, 'official');
    assert.equal(j.judge, 'file:verdicts.jsonl');
    assert.equal(j.entities, 3);
    assert.deepEqual(j.entitiesWithoutLogs, ['1004']);
    assert.equal(j.notRecorded, 1, 'the failed API call has no recorded verdict');
    const o = exp.overall_statistics;
    close(100 * j.messageWise.sampleAveraged, o.message_wise_context.average_correct_percentage, 'message-wise sample');
    close(100 * j.messageWise.itemAveraged, o.message_wise_context.overall_correct_percentage, 'message-wise item');
    close(100 * j.trajectoryWise.sampleAveraged, o.chat_wise_context.average_correct_percentage, 'chat-wise sample');
    close(100 * j.trajectoryWise.itemAveraged, o.chat_wise_context.overall_correct_percentage, 'chat-wise item');
    for (const p of j.topK) {
      close(
        100 * p.correct,
        exp.cumulative_message_statistics.stats_by_threshold[`top_${p.k}`]!.correct_percentage,
        `top_${p.k}`,
      );
    }
    assert.deepEqual(j.perEntity[0]!.messageWise.labels, [
      'CORRECT_INFO',
      'CORRECT_INFO',
      'correct_info',
      'INSUFFICIENT_INFO',
    ]);
    assert.deepEqual(j.changedBy, { unparsed_reply: 2, label_case: 1 });
  });

  it('prints the preset and what official-code options changed; --preset paper and --option override', async () => {
    const r = await run([]);
    assert.equal(r.rc, 0, r.err);
    assert.match(r.out, /preset: official/);
    assert.match(r.out, /changed by official-code options: unparsed_reply 2, label_case 1/);
    const p = await run(['--preset', 'paper', '--option', 'label_case=exact', '--json']);
    const j = JSON.parse(p.out) as {
      preset: string;
      options: Record<string, string>;
      changedBy: Record<string, number>;
    };
    assert.equal(j.preset, 'paper');
    assert.equal(j.options.empty_insights, 'zero');
    assert.equal(j.options.label_case, 'exact');
    assert.deepEqual(j.changedBy, { label_case: 1 });
  });

  it('bad verdict files and presets are named', async () => {
    const bad = await run(['--preset', 'published']);
    assert.notEqual(bad.rc, 0);
    assert.match(bad.err, /--preset.*official, paper/);
    assert.throws(
      () => new RecordedJudge('v.jsonl', '{"id": {"entity": "1"}, "raw": "x"}\nnot json\n'),
      (e: unknown) => e instanceof LoupeInputError && e.subject === 'v.jsonl:2',
    );
    assert.throws(
      () => new RecordedJudge('v.jsonl', '{"id": {"entity": "1"}}\n'),
      (e: unknown) => e instanceof LoupeInputError && /verdict.*raw/.test(e.message),
    );
    assert.throws(
      () => new RecordedJudge('v.jsonl', '{"id": {"item": 0}, "raw": "a"}\n{"id": {"item": "0"}, "raw": "b"}\n'),
      (e: unknown) => e instanceof LoupeInputError && /repeats/.test(e.message),
    );
    assert.throws(
      () => new RecordedJudge(join(FIX, 'no-such.jsonl')),
      (e: unknown) => e instanceof LoupeInputError && /cannot read/.test(e.message),
    );
  });
});

describe('BLADE Fig. 4 coverage series equal blade_bench MetricsAcrossRuns coverage (issue 21 item 10)', async () => {
  const { bladeMetricBars, METRIC_TYPES, forEachCombination, binomial } =
    await import('../../../../src/core/benchmarks/blade/eval/metrics.ts');
  const raw = readJson<{
    k: number;
    datasets: Array<{
      dataset: string;
      gt: { numCvars: number; numMspecs: number; numMspecsUnique: number; numTspecs: number };
      runs: Array<{
        status: 'ok' | 'generation_failed';
        precision?: Record<string, number>;
        items?: Record<string, string[]>;
      }>;
    }>;
  }>('blade/runs.json');
  const exp = readJson<Record<string, Record<string, number[]>>>('blade/expected_fig4.json');

  it('enumerates every k-subset in itertools order when C(n, k) ≤ 1000 (generation failures appended, as BLADE)', () => {
    const datasets = raw.datasets.map((d) => ({
      dataset: d.dataset,
      gt: d.gt,
      runs: d.runs.map((r) => ({
        status: r.status,
        metrics: Object.fromEntries(
          METRIC_TYPES.map((t) => [
            t,
            {
              gtItems: r.items?.[t] ?? [],
              gtNames: r.items?.[t] ?? [],
              precision: r.precision?.[t] ?? 0,
              matched: 0,
              denominator: 0,
            },
          ]),
        ) as never,
      })),
    }));
    const bars = bladeMetricBars(datasets, {
      k: raw.k,
      samples: 10,
      seed: 0,
      generationFailures: 'append',
      coverageKey: 'name',
      failedRuns: 'drop',
    });
    assert.deepEqual(bars.subsets, { enumerated: 2, sampled: 0 });
    for (const t of METRIC_TYPES) {
      const want = raw.datasets.flatMap((d) => exp[d.dataset]![t]!);
      assert.equal(bars.coverageSeries[t].length, want.length, t);
      bars.coverageSeries[t].forEach((x, i) => close(x, want[i]!, `${t}[${i}]`));
    }
  });

  it('combinations: C(n, k) and lexicographic enumeration', () => {
    const seen: string[] = [];
    forEachCombination(4, 2, (c) => seen.push([...c].join('')));
    assert.deepEqual(seen, ['01', '02', '03', '12', '13', '23']);
    assert.equal(binomial(20, 10), 184756);
    assert.equal(binomial(3, 5), 0);
  });
});

describe('loupe score --longda-answers under presets', async () => {
  const { main } = await import('../../../../src/cli/main.ts');
  const run = async (args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const rc = await main(['score', '--longda-answers', 'answers_progress.csv', ...args], {
      out: (s: string) => out.push(s),
      err: (s: string) => err.push(s),
      env: {},
      cwd: join(FIX, 'longda'),
    } as never);
    return { rc, out: out.join(''), err: err.join('') };
  };
  it('official (default): MAE is written as "Infinity" and the changed row is counted; paper leaves it out', async () => {
    const o = await run(['--json']);
    assert.equal(o.rc, 0, o.err);
    const j = JSON.parse(o.out) as { preset: string; mae: unknown; changedBy: Record<string, number> };
    assert.equal(j.preset, 'official');
    assert.equal(j.mae, 'Infinity');
    assert.deepEqual(j.changedBy, { infinite_mae: 1 });
    const p = JSON.parse((await run(['--json', '--preset', 'paper', '--option', 'list_scoring=partial'])).out) as {
      preset: string;
      mae: number;
      options: Record<string, unknown>;
    };
    assert.equal(p.preset, 'paper');
    assert.equal(typeof p.mae, 'number');
    assert.equal(p.options.list_scoring, 'partial', '--option overrides the preset');
    assert.equal(p.options.infinite_mae, 'exclude');
    const t = await run([]);
    assert.match(t.out, /preset: official/);
    assert.match(t.out, /changed by official-code options: infinite_mae 1/);
  });
});
