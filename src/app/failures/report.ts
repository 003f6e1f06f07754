/**
 * The failure-analysis section of `loupe report`: Fig. 8 (failure classes per model and scenario), Table 6
 * (hallucination rate per model and domain) and the Table 4 form (failure modes with counts and examples) per
 * taxonomy, from resolved expert annotations. Source: DDR-Bench paper Fig. 8, Table 6; AnalystBench Table 4; issue 19.
 */
import type { ReportModel } from '../report/report.ts';
import { failureClassSpec, hallucinationSpec, type FailureFigures } from '../../core/failures/figures.ts';

type Section = ReportModel['sections'][number];
const pct = (x: number) => (x * 100).toFixed(2);
const clip = (s: string, n = 90) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/**
 * The report section of failure figures, or null when no failure case, hallucination check or tag is resolved.
 * @param figs from `failureFigures`.
 */
export function failureReportSection(figs: FailureFigures): Section | null {
  const c = figs.counts;
  if (!c.casesResolved && !c.checksResolved && !c.tagsResolved) return null;
  const notes = [
    `Expert verdicts resolved as adjudicated > majority > single annotator; pending items are not counted. Failure cases: ${c.casesResolved} of ${c.cases} resolved (${c.judgeWrong} found not to be failures, left out). Hallucination checks: ${c.checksResolved} of ${c.checks}. Tags on steps and report spans: ${c.tagsResolved} of ${c.tags}.`,
    "Hallucinated = the insight states facts that are correct but not derivable from what the agent saw (DDR-Bench §7). Avg = mean of the model's domain rates, as in DDR-Bench Table 6.",
  ];
  const tables: Section['tables'] = [];
  const figures: Section['figures'] = [];
  if (figs.fig8.length) {
    const cells = [...new Set(figs.fig8.map((r) => `${r.model}\u0000${r.scenario}`))];
    const classes = [...new Set(figs.fig8.map((r) => r.label))];
    tables.push({
      caption: 'Failure classes per model and scenario (DDR-Bench Fig. 8 form): cases with the class / annotated cases',
      header: ['model', 'scenario', 'cases', ...classes],
      rows: cells.map((k) => {
        const [model, scenario] = k.split('\u0000') as [string, string];
        const rs = figs.fig8.filter((r) => r.model === model && r.scenario === scenario);
        return [
          { text: model },
          { text: scenario },
          { text: String(rs[0]?.cases ?? 0) },
          ...classes.map((l) => {
            const r = rs.find((x) => x.label === l);
            return { text: r ? `${r.count} (${pct(r.share)}%)` : '—' };
          }),
        ];
      }),
    });
    figures.push({
      title: 'Failure classes per model and scenario (Fig. 8 form)',
      spec: failureClassSpec(figs.fig8) as never,
    });
  }
  if (figs.table6.length) {
    const domains = [...new Set(figs.table6.map((r) => r.domain).filter((d) => d !== 'Avg')), 'Avg'];
    const models = [...new Set(figs.table6.map((r) => r.model))];
    tables.push({
      caption:
        'Hallucination rate per model and domain, % (DDR-Bench Table 6 form; hallucinated / checked in each cell)',
      header: ['model', ...domains],
      rows: models.map((m) => [
        { text: m },
        ...domains.map((d) => {
          const r = figs.table6.find((x) => x.model === m && x.domain === d);
          return { text: r ? `${pct(r.rate)} (${r.hallucinated}/${r.checked})` : '—' };
        }),
      ]),
    });
    figures.push({
      title: 'Hallucination rate per model and domain (Table 6 form)',
      spec: hallucinationSpec(figs.table6) as never,
    });
  }
  for (const t of figs.table4) {
    tables.push({
      caption: `${t.taxonomy.title}: failure modes with counts and examples (AnalystBench Table 4 form; ${t.failures} tagged failures; source: ${t.taxonomy.source})`,
      header: ['mode', 'definition', 'count', 'share %', 'example'],
      rows: t.rows.map((r) => [
        { text: r.label },
        { text: clip(r.definition, 120) },
        { text: String(r.count) },
        { text: pct(r.share) },
        {
          text: r.examples[0]
            ? clip(
                `“${r.examples[0].text}”${r.examples[0].note ? ` — ${r.examples[0].note}` : ''} (run ${r.examples[0].runId})`,
                140,
              )
            : '—',
          ...(r.examples.length ? { runIds: r.examples.map((e) => e.runId) } : {}),
        },
      ]),
    });
  }
  return { heading: 'Failure analysis (expert annotations)', notes, tables, figures };
}
