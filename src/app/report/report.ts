/**
 * Results report (Markdown or self-contained HTML) from scored runs: aggregate tables per
 * benchmark with the options and judges used, model × block tables, LongDA match vs tokens and
 * tool-usage heatmaps, BLADE F1 with bootstrap CIs. Plots are Vega-Lite specs: embedded as JSON in
 * both formats and rendered to inline SVG (vega, no browser) in HTML.
 * Source: issue 8 "`loupe report`".
 */
import { findBenchmark } from '../../core/benchmarks/registry.ts';
import type { RunScore, ScoreAggregate } from '../../core/runs/score-stored-run.ts';
import { oneLine } from '../../core/util/text-safety.ts';
import {
  bladeCiSpec,
  heatmapSpec,
  heatmapsByModel,
  longdaMatchVsTokens,
  matchVsTokensSpec,
  metricsByModelBlock,
  modelBarSpec,
  type ModelBlockTable,
  type ScoredRunRow,
  type VegaLiteSpec,
} from '../results/results.ts';
import { publishedForm, type SuiteHeadline } from '../compare/headline.ts';

/** One figure of the report. */
interface Figure {
  title: string;
  spec: VegaLiteSpec;
}

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
const fmt = (v: number | null | undefined, percent: boolean) =>
  v === null || v === undefined || Number.isNaN(v)
    ? '—'
    : percent
      ? (v * 100).toFixed(2)
      : Number.isInteger(v)
        ? String(v)
        : v.toFixed(3);
const PERCENT_KEYS =
  /^(coverage|coverageComparable|coverageStructural|match|matchPartial|matchStrict|(messageWise|trajectoryWise)(SampleAveraged|ItemAveraged|Accuracy)|hallucinationRate|weightedF1.*|\w*Precision|\w*Accuracy)$/;

/** Report content before rendering. */
export interface ReportModel {
  title: string;
  generatedAt: string;
  sections: Array<{
    heading: string;
    notes: string[];
    tables: Array<{ caption: string; header: string[]; rows: Array<Array<{ text: string; runIds?: string[] }>> }>;
    figures: Figure[];
  }>;
}

/**
 * Builds the report content from run scores and their aggregates.
 * @param runs per-run scores; `aggs` from `aggregateScores`. @returns sections with tables and Vega-Lite figures.
 */
export function buildReport(
  runs: readonly RunScore[],
  aggs: readonly ScoreAggregate[],
  title = 'Loupe results',
): ReportModel {
  const sections: ReportModel['sections'] = [];
  const benchmarks = [...new Set(runs.map((r) => r.benchmark))].sort();
  for (const b of benchmarks) {
    const rs = runs.filter((r) => r.benchmark === b);
    const ok = rs.filter((r) => !r.error);
    const ag = aggs.filter((a) => a.benchmark === b);
    const notes: string[] = [];
    const judges = [...new Set(ok.map((r) => r.judgeId))];
    notes.push(
      `Judge: ${judges.join(', ') || '—'}. Pending judgements: ${rs.reduce((s, r) => s + r.pending, 0)}; unjudged: ${rs.reduce((s, r) => s + r.unjudged, 0)}.`,
    );
    const optionSets = [...new Set(ok.map((r) => JSON.stringify(r.options)))];
    for (const o of optionSets) {
      notes.push(
        `Options: ${Object.entries(JSON.parse(o) as Record<string, unknown>)
          .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
          .join(', ')}`,
      );
    }
    const failed = rs.filter((r) => r.error);
    for (const f of failed) notes.push(`Run ${f.runId} not scored: ${f.error}`);
    const keys = [...new Set(ag.flatMap((a) => Object.keys(a.metrics)))];
    const tables: ReportModel['sections'][number]['tables'] = [
      {
        caption: `Aggregate per model (${ag[0]?.method ?? ''}; rates in %)`,
        header: ['model', 'runs', ...keys],
        rows: ag.map((a) => [
          { text: a.model },
          { text: String(a.runs), runIds: a.runIds },
          ...keys.map((k) => ({ text: fmt(a.metrics[k], PERCENT_KEYS.test(k)), runIds: a.runIds })),
        ]),
      },
    ];
    // What to show comes from the benchmark's presentation (src/core/benchmarks/types.ts); a kind no longer registered
    // (a test-only benchmark's stored scores) gets the aggregate table only.
    const p = findBenchmark(b)?.presentation;
    const main = p?.mainMetric;
    const figures: Figure[] = [];
    if (main) {
      const rows: ScoredRunRow[] = ok.map((r) => ({
        runId: r.runId,
        suite: r.suite,
        blockId: r.blockId,
        model: r.model,
        metrics: r.summary,
      }));
      const t = metricsByModelBlock(rows, main.key);
      tables.push(modelBlockTable(t, main.label, main.percent));
      if (t.modelMeans.some((m) => m.value !== null)) {
        figures.push({ title: main.label, spec: modelBarSpec(t, main.label, main.percent) });
      }
    }
    const eff = p?.tokenEfficiency;
    // Runs whose token use is unknown (external MCP clients, issue 24) are left out of the rate-vs-tokens figure.
    const points = eff
      ? ok.flatMap((r) => {
          const pt = eff.point(r);
          return pt ? [{ runId: r.runId, model: r.model, ...pt }] : [];
        })
      : [];
    if (eff && points.length) {
      const mt = longdaMatchVsTokens(points);
      if (mt.fit) {
        notes.push(
          `${eff.rate[0]!.toUpperCase()}${eff.rate.slice(1)} vs tokens fit: ${eff.rate} = ${mt.fit.a.toFixed(4)}·ln(tokens) + ${mt.fit.b.toFixed(4)} (R² ${mt.fit.r2.toFixed(3)}, models ${mt.fit.models.join(', ')}).`,
        );
      }
      figures.push({ title: eff.title, spec: matchVsTokensSpec(mt) });
    }
    const usage = p?.toolUsage;
    if (usage && ok.length) {
      const hms = heatmapsByModel(
        ok.map((r) => ({ runId: r.runId, model: r.model, steps: usage.fromScore(r).steps })),
        usage.heatmap,
        { tools: usage.fromScore(ok[0]!).tools },
      );
      for (const h of hms) figures.push({ title: `Tool usage — ${h.model}`, spec: heatmapSpec(h.model, h.heatmap) });
    }
    const cis = p?.categoryCis;
    if (cis) {
      const rows = cis.rows(ag);
      if (rows.length) {
        tables.push({
          caption: cis.caption,
          header: ['model', 'type', 'precision', 'coverage', 'F1'],
          rows: rows.map((r) => [
            { text: r.model },
            { text: r.type },
            ...[r.precision, r.coverage, r.f1].map((x) => ({
              text: Number.isFinite(x.mean) ? `${x.mean.toFixed(3)} [${x.lo.toFixed(3)}, ${x.hi.toFixed(3)}]` : '—',
              runIds: r.runIds,
            })),
          ]),
        });
        figures.push({ title: cis.figureTitle, spec: bladeCiSpec(rows) });
      }
    }
    sections.push({ heading: b, notes, tables, figures });
  }
  return { title, generatedAt: new Date().toISOString(), sections };
}

/**
 * The headline section (issue 48): per benchmark, each profile's mean ± clustered SE [CI] with items, clusters, repeats
 * and the within-item variance, then the best profile's paired difference from each other profile. Rates are shown in
 * percentage points. A profile or comparison that cannot be computed shows its reason instead of a number.
 * @param suites from `headlineTables`. @returns a report section (heading "Headline").
 */
export function headlineSection(suites: readonly SuiteHeadline[]): ReportModel['sections'][number] {
  const tables: ReportModel['sections'][number]['tables'] = [];
  const notes = [
    "Mean over items with repeats averaged within item first; ± the cluster-robust standard error (statsmodels small-sample correction) and the normal confidence interval; the cluster is each benchmark's natural unit (Miller 2024, arXiv:2411.00640 §2.2, §3.1).",
    'Differences are paired over the items both profiles ran (paired t on item means with the clustered SE, G − 1 degrees of freedom; a seeded cluster bootstrap as a check); "detectable" is the smallest difference the comparison could detect at 80% power, α = 0.05 (Miller §5).',
  ];
  for (const s of suites) {
    const pct = s.percent;
    const unit = pct ? ' (percentage points)' : '';
    const lv = Math.round(s.level * 100);
    tables.push({
      caption: `${s.title}: ${s.metric ?? 'headline metric'}${unit}, mean ± SE [${lv}% CI], clustered by ${s.clusterUnit}`,
      header: [
        'profile',
        `mean ± SE [${lv}% CI]`,
        'items',
        `${s.clusterUnit}s`,
        'repeats',
        'within-item variance',
        'Miller uncorrected SE',
        'runs',
      ],
      rows: s.rows.map((r) => {
        const f = r.figure;
        if (!f) {
          return [
            { text: r.profile.label },
            { text: `— (${r.reason ?? 'no figure'})`, runIds: r.runIds },
            { text: '' },
            { text: '' },
            { text: '' },
            { text: '' },
            { text: '' },
            { text: String(r.runIds.length), runIds: r.runIds },
          ];
        }
        const rep = f.repeats.min === f.repeats.max ? String(f.repeats.min) : `${f.repeats.min}–${f.repeats.max}`;
        return [
          { text: r.profile.label },
          { text: publishedForm(f.mean, f.se, f.ci, pct), runIds: r.runIds },
          { text: String(f.items) },
          { text: String(f.clusters) },
          { text: rep },
          { text: f.withinItemVariance === null ? '—' : f.withinItemVariance.toPrecision(3) },
          { text: pct ? (f.seMillerUncorrected * 100).toFixed(2) : f.seMillerUncorrected.toFixed(4) },
          { text: String(r.runIds.length), runIds: r.runIds },
        ];
      }),
    });
    if (s.comparisons.length) {
      const label = new Map(s.rows.map((r) => [r.profile.player, r.profile.label]));
      tables.push({
        caption: `${s.title}: paired differences from the best profile${unit}`,
        header: [
          'A − B',
          `difference ± SE [${lv}% CI]`,
          'p (paired t)',
          'cluster bootstrap CI',
          'shared items',
          `${s.clusterUnit}s`,
          'detectable ≥',
        ],
        rows: s.comparisons.map((c) => {
          const name = `${label.get(c.a) ?? c.a} − ${label.get(c.b) ?? c.b}`;
          if (c.reason) {
            return [
              { text: name },
              { text: `— (${c.reason})` },
              { text: '' },
              { text: '' },
              { text: '' },
              { text: '' },
              { text: '' },
            ];
          }
          const f = (v: number) => (pct ? (v * 100).toFixed(1) : v.toFixed(3));
          return [
            { text: name },
            { text: publishedForm(c.difference, c.se, c.ci, pct) },
            { text: Number.isFinite(c.p) ? c.p.toPrecision(3) : '— (no variation)' },
            { text: c.bootstrapCi ? `[${f(c.bootstrapCi[0])}, ${f(c.bootstrapCi[1])}]` : '—' },
            { text: String(c.items) },
            { text: String(c.clusters) },
            { text: c.minimumDetectable === null ? '— (no repeats)' : f(c.minimumDetectable) },
          ];
        }),
      });
    }
  }
  return { heading: 'Headline', notes, tables, figures: [] };
}

function modelBlockTable(
  t: ModelBlockTable,
  label: string,
  percent: boolean,
): ReportModel['sections'][number]['tables'][number] {
  return {
    caption: `${label} per model × block${percent ? ' (%)' : ''}`,
    header: ['model', ...t.blocks, 'mean'],
    rows: t.models.map((m) => [
      { text: m },
      ...t.blocks.map((b) => {
        const c = t.cells.find((x) => x.model === m && x.block === b);
        return c ? { text: fmt(c.value, percent), runIds: c.runIds } : { text: '' };
      }),
      (() => {
        const mm = t.modelMeans.find((x) => x.model === m)!;
        return { text: fmt(mm.value, percent), runIds: mm.runIds };
      })(),
    ]),
  };
}

/**
 * Renders the report as Markdown (Vega-Lite specs in ```vega-lite fences).
 * @param r the report model. @returns Markdown text.
 */
export function renderMarkdown(r: ReportModel): string {
  const out: string[] = [`# ${r.title}`, '', `Generated ${r.generatedAt}.`, ''];
  for (const s of r.sections) {
    out.push(`## ${s.heading}`, '');
    for (const n of s.notes) out.push(`- ${n}`);
    out.push('');
    for (const t of s.tables) {
      // Cells and headers hold stored names (models, MCP clients, blocks): Markdown-escaped, controls shown (issue 38).
      out.push(
        `**${t.caption}**`,
        '',
        `| ${t.header.map(mdCell).join(' | ')} |`,
        `|${t.header.map(() => '---').join('|')}|`,
      );
      for (const row of t.rows) out.push(`| ${row.map((c) => mdCell(c.text)).join(' | ')} |`);
      out.push('');
    }
    for (const f of s.figures) out.push(`**${f.title}**`, '', '```vega-lite', JSON.stringify(f.spec), '```', '');
  }
  return out.join('\n');
}

/**
 * A table cell for Markdown: one line, controls escaped, the characters of HTML, code, emphasis, images and maths
 * backslash-escaped (CommonMark §2.4) and `](` broken so no inline link forms; `[0.4, 0.6]` intervals stay readable.
 */
function mdCell(text: string): string {
  return oneLine(text, 500)
    .replace(/[\\`*_<>|!$~{}&]/g, (c) => `\\${c}`)
    .replace(/\]\(/g, ']\\(');
}

/** A column header that may wrap between words and camelCase parts (`coverage<wbr>Comparable`), never inside a number. */
function wrapHeader(h: string): string {
  return esc(h)
    .replace(/([a-z])([A-Z])/g, '$1<wbr>$2')
    .replace(/_/g, '_<wbr>');
}

/**
 * Renders the report as one self-contained HTML page: tables (each number's title lists its runs),
 * figures as inline SVG rendered with vega, and every Vega-Lite spec embedded as JSON.
 * @param r the report model. @returns HTML text.
 */
export async function renderHtml(r: ReportModel): Promise<string> {
  const vega = await import('vega');
  const vl = await import('vega-lite');
  const parts: string[] = [];
  let fig = 0;
  for (const s of r.sections) {
    parts.push(`<h2>${esc(s.heading)}</h2><ul>${s.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul>`);
    for (const t of s.tables) {
      parts.push(
        `<table><caption>${esc(t.caption)}</caption><thead><tr>${t.header.map((h) => `<th>${wrapHeader(h)}</th>`).join('')}</tr></thead><tbody>`,
      );
      for (const row of t.rows) {
        parts.push(
          `<tr>${row.map((c) => `<td${c.runIds ? ` title="runs: ${esc(c.runIds.join(', '))}" data-runs="${esc(c.runIds.join(','))}"` : ''}>${esc(c.text)}</td>`).join('')}</tr>`,
        );
      }
      parts.push('</tbody></table>');
    }
    for (const f of s.figures) {
      let svg: string;
      try {
        const view = new vega.View(vega.parse(vl.compile(f.spec as never).spec), { renderer: 'none' });
        svg = await view.toSVG();
        view.finalize();
      } catch (e) {
        svg = `<p class="err">figure not rendered: ${esc((e as Error).message)}</p>`;
      }
      const id = `fig${fig++}`;
      parts.push(
        `<figure id="${id}"><figcaption>${esc(f.title)}</figcaption>${svg}<script type="application/vnd.vega-lite+json" data-figure="${id}">${JSON.stringify(f.spec).replace(/</g, '\\u003c')}</script></figure>`,
      );
    }
  }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(r.title)}</title>
<style>body{font:14px/1.45 system-ui,sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0;max-width:100%}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}td{white-space:nowrap}th{font-size:13px}td:first-child,th:first-child{text-align:left}caption{text-align:left;font-weight:600;margin-bottom:4px}figure{margin:1.5em 0}figcaption{font-weight:600}.err{color:#a00}</style>
</head><body><h1>${esc(r.title)}</h1><p>Generated ${esc(r.generatedAt)}.</p>${parts.join('\n')}</body></html>
`;
}
