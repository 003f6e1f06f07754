/**
 * Issue 47 items 9–12: DDR-Bench judge replies nobody wrote for DDR (NaN / Infinity in JSON, Loupe's `label` key only,
 * empty and whitespace-only replies, text with INCORRECT_INFO, fences, trailing data) read by `loupe score`'s recorded
 * judge and scored under `--preset official` equal DDR's own evaluator bit for bit: every item's label, every
 * percentage (sample average by Python's exact `statistics.mean`) and the top-k curve
 * (test/fixtures/official-parity/ddr-replies/, see ../../../fixtures/official-parity/README.md).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  ddrOfficialReading,
  ddrOptions,
  scoreDdrChecklists,
  type DdrChecklistScore,
} from '../../../../src/core/benchmarks/ddr/eval.ts';
import { readDdrLogFolder } from '../../../../src/core/benchmarks/ddr/official-logs.ts';
import { parseOptionsWithPreset } from '../../../../src/core/benchmarks/options.ts';
import { getBenchmark } from '../../../../src/core/benchmarks/registry.ts';
import { RecordedJudge } from '../../../../src/core/eval/judges/recorded.ts';

const DIR = join(import.meta.dirname, '../../../fixtures/official-parity/ddr-replies');
type Ctx = 'message_wise_context' | 'chat_wise_context';
const exp = JSON.parse(readFileSync(join(DIR, 'expected.json'), 'utf8')) as {
  overall_statistics: Record<
    Ctx,
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
    message_wise_context_results: Array<{ context_quality: unknown }>;
    chat_wise_context_results: Array<{ context_quality: unknown }>;
    summary: Partial<Record<Ctx, { correct_percentage: number }>>;
  }>;
};
const { runs } = readDdrLogFolder(join(DIR, 'logs'), join(DIR, 'qa.json'), 'mimic');
const score = (preset: 'official' | 'paper', extra: Record<string, string> = {}) =>
  scoreDdrChecklists(
    runs,
    new RecordedJudge(join(DIR, 'verdicts.jsonl')),
    ddrOptions(
      parseOptionsWithPreset(getBenchmark('ddr').scoreOptions, preset, extra) as Record<string, string | number>,
    ),
  );
const official = (q: unknown) =>
  q === 'CORRECT_INFO' || q === 'INCORRECT_INFO' ? q : q === 'API_FAILED' ? 'failed' : 'neither';
const mine = (it: { label: string | null; status: string }) =>
  it.status === 'error'
    ? 'failed'
    : it.label === 'CORRECT_INFO' || it.label === 'INCORRECT_INFO'
      ? it.label
      : 'neither';

/** Every official figure next to Loupe's: [name, Loupe, DDR]. */
function pairs(s: DdrChecklistScore): Array<[string, unknown, unknown]> {
  const out: Array<[string, unknown, unknown]> = [];
  const byId = new Map(s.perEntity.map((e) => [e.entityId, e]));
  for (const er of exp.entity_results) {
    const e = byId.get(er.entity_id)!;
    er.message_wise_context_results.forEach((r, i) =>
      out.push([
        `${er.entity_id} message-wise item ${i}`,
        e.messageWise.items[i] ? mine(e.messageWise.items[i]) : 'missing',
        official(r.context_quality),
      ]),
    );
    er.chat_wise_context_results.forEach((r, i) =>
      out.push([
        `${er.entity_id} chat-wise item ${i}`,
        e.trajectoryWise.items[i] ? mine(e.trajectoryWise.items[i]) : 'missing',
        official(r.context_quality),
      ]),
    );
    for (const [ctx, sc] of [
      ['message_wise_context', e.messageWise],
      ['chat_wise_context', e.trajectoryWise],
    ] as const) {
      const x = er.summary[ctx];
      if (x) {
        out.push([`${er.entity_id} ${ctx} correct_percentage`, (sc.correct / sc.judged) * 100, x.correct_percentage]);
      }
    }
  }
  for (const [ctx, a] of [
    ['message_wise_context', s.messageWise],
    ['chat_wise_context', s.trajectoryWise],
  ] as const) {
    const o = exp.overall_statistics[ctx];
    out.push([`${ctx} average_correct_percentage`, a.percent.sampleAveraged, o.average_correct_percentage]);
    out.push([`${ctx} overall_correct_percentage`, a.percent.itemAveraged, o.overall_correct_percentage]);
    out.push([`${ctx} total_questions`, a.items, o.total_questions]);
  }
  for (const p of s.topK) {
    const e = exp.cumulative_message_statistics.stats_by_threshold[`top_${p.k}`]!;
    out.push(
      [`top_${p.k} correct`, 100 * p.correct, e.correct_percentage],
      [`top_${p.k} incorrect`, 100 * p.incorrect, e.incorrect_percentage],
      [`top_${p.k} insufficient`, 100 * p.insufficient, e.insufficient_percentage],
    );
  }
  return out;
}

describe('DDR-Bench replies with NaN, label-only, empty and mixed text equal DDR evaluate/ (fixture ddr-replies/)', () => {
  it("official preset: every label, percentage and top-k point === DDR's (198 figures)", async () => {
    const s = await score('official');
    const all = pairs(s);
    const differ = all.filter(([, a, b]) => !Object.is(a, b));
    assert.deepEqual(differ, []);
    assert.equal(all.length, 198);
    assert.equal(s.options.unparsed_reply, 'substring', 'the score records how replies were read');
  });

  it('item 12: the sample average is exact; a left-to-right float mean differs here in the last bit (both contexts)', async () => {
    const s = await score('official');
    for (const [key, ctx] of [
      ['messageWise', 'message_wise_context'],
      ['trajectoryWise', 'chat_wise_context'],
    ] as const) {
      const e = s.perEntity.map((x) => x[key]).filter((x) => x.included && x.judged);
      const pcts = e.map((x) => (x.correct / x.judged) * 100);
      const floatMean = pcts.reduce((a, b) => a + b, 0) / pcts.length;
      assert.equal(s[key].percent.sampleAveraged, exp.overall_statistics[ctx].average_correct_percentage);
      assert.notEqual(floatMean, exp.overall_statistics[ctx].average_correct_percentage, ctx);
    }
  });

  it('items 9–11 one by one: NaN JSON parsed (no fallback), label-only insufficient, empty reply API_FAILED', () => {
    const ddr = { json: 'python', keys: 'ddr', fallback: 'substring' } as const;
    const nan = ddrOfficialReading(
      '{"context_quality": "INCORRECT_INFO", "contradicting_message_indices": [1], "confidence": NaN}',
      ddr,
    )!;
    assert.deepEqual([nan.kind, nan.label, nan.contradicting], ['json', 'INCORRECT_INFO', [1]]);
    assert.equal(ddrOfficialReading('{"label": "CORRECT_INFO"}', ddr)!.label, 'INSUFFICIENT_INFO');
    assert.equal(
      ddrOfficialReading('{"label": "CORRECT_INFO"}', { ...ddr, keys: 'loupe' })!.label,
      'CORRECT_INFO',
      "a reply to Loupe's prompt is read by its key",
    );
    assert.equal(ddrOfficialReading(' \n\t', ddr)!.kind, 'empty');
    assert.equal(ddrOfficialReading('\u001c\u001c', ddr)!.kind, 'empty', 'Python strips U+001C, JavaScript does not');
    assert.equal(ddrOfficialReading('It is INCORRECT_INFO', ddr)!.label, 'CORRECT_INFO', "DDR's substring fallback");
    assert.equal(ddrOfficialReading('{"x": NaN}')!.kind, 'text', 'Loupe 0.1 reading (JSON.parse) falls back');
  });

  it('whole-word: INCORRECT_INFO text is never read as correct; a reply naming two labels fails', async () => {
    const ww = { json: 'python', keys: 'ddr', fallback: 'whole-word' } as const;
    assert.equal(
      ddrOfficialReading('The findings contradict the reference answer: INCORRECT_INFO.', ww)!.label,
      'INCORRECT_INFO',
    );
    assert.equal(ddrOfficialReading('Not CORRECT_INFO but INCORRECT_INFO', ww)!.kind, 'ambiguous');
    assert.equal(ddrOfficialReading('label: correct_info', ww)!.label, 'CORRECT_INFO');
    const off = await score('official');
    const s = await score('official', { unparsed_reply: 'whole-word' });
    assert.equal(s.options.unparsed_reply, 'whole-word');
    const items = (x: DdrChecklistScore) =>
      x.perEntity.flatMap((e) => [...e.messageWise.items, ...e.trajectoryWise.items]);
    const texts = items(s).filter((i) => i.reading === 'text');
    assert.ok(texts.some((i) => i.label === 'INCORRECT_INFO'));
    assert.ok(items(s).some((i) => i.reading === 'ambiguous' && i.status === 'error'));
    assert.ok(
      s.messageWise.correct < off.messageWise.correct,
      'fewer items read as correct than under the substring fallback',
    );
  });

  it('paper preset: replies that are not JSON for JSON.parse fail (as before), none is re-read', async () => {
    const s = await score('paper');
    const items = s.perEntity.flatMap((e) => [...e.messageWise.items, ...e.trajectoryWise.items]);
    assert.equal(items.filter((i) => i.reading !== undefined).length, 0);
    assert.deepEqual(s.changedBy, {});
  });
});
