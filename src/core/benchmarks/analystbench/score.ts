/**
 * AnalystBench scoring of stored runs: the run's `report.md` against the task's 15-item checklist (1–5 rubric
 * scores), claim groundedness against the sources, figure coverage and quality against the reference report.
 * Source: AnalystBench paper §4 and App. C; spec §4.3; issues 8, 12.
 */
import { join } from 'node:path';
import { readReferenceReport, readSourcesText } from './sources.ts';
import { readRunFile } from '../../store/artefacts.ts';
import type { RunFolder } from '../../store/run-folder.ts';
import type { RunRecord } from '../../store/records.ts';
import type { RunStore } from '../../store/types.ts';
import type { Block } from '../../suites/types.ts';
import { scoreBase, type RunScore } from '../../eval/run-score.ts';
import type { Judge } from '../../eval/judges/types.ts';
import { readContainedFile } from '../../util/contained.ts';
import { stepTextOf } from '../../eval/atomic-claims.ts';
import { annotationStoreOf, expertFactSplits } from '../../annotations/index.ts';
import { errorMessage } from '../../util/errors.ts';
import { nullLogger, type Logger } from '../../util/log.ts';
import type { OptionValues } from '../options.ts';
import {
  analystOptions,
  extractFigures,
  figureCaptionsFromText,
  lexicalEmbedder,
  parseAnalystChecklist,
  scoreAnalystChecklist,
  scoreAnalystClaims,
  scoreAnalystFigures,
  type AnalystCriterion,
  type CaptionEmbedder,
  type ReportFigure,
} from './eval.ts';

/**
 * Criteria from suite checklist items: `question` is the criterion; a rubric is read from `answer`
 * lines `1: …` … `5: …` when present.
 * @param items checklist items. @returns criteria.
 */
export function criteriaFromChecklist(items: ReadonlyArray<{ question: string; answer?: string }>): AnalystCriterion[] {
  return items.map((c) => {
    const text = `- ${c.question}\n${(c.answer ?? '')
      .split(/\r?\n/)
      .map((l) => `  ${l.trim().replace(/^[-*]\s*/, '- ')}`)
      .join('\n')}`;
    const parsed = /(^|\n)\s+- [1-5]\s*:/.test(text) ? parseAnalystChecklist(text)[0] : undefined;
    if (parsed) return parsed;
    // a fact checklist (question + expected answer): the criterion asks for that fact
    return {
      criterion: c.answer?.trim() ? `${c.question} The expected answer is: ${c.answer.trim()}` : c.question,
      rubric: [],
    };
  });
}

/**
 * Scores one AnalystBench run: the report's checklist criteria (1–5 via the judge, normalised), claim
 * groundedness against the block's sources, and figure coverage and quality against the reference report.
 * @param o.store the run store: `report.md` is read from the run folder, else from the copy kept in the store (issue 26);
 *   without it, from the run folder only. `o.folder` the run's folder checked against the runs folder (issue 36): a
 *   recorded workspace outside it is never read. `o.options` parsed scoring options; `o.embedder` caption embedder (default lexical).
 * @returns the score; a run without `report.md` is an agent generation failure (`error`).
 */
export async function scoreAnalystRun(o: {
  store?: RunStore;
  run: RunRecord;
  folder: RunFolder;
  block: Block;
  judge: Judge;
  options: OptionValues;
  embedder?: CaptionEmbedder;
  log?: Logger;
}): Promise<RunScore> {
  const { run, block } = o;
  const opts = analystOptions(o.options as Record<string, string | number>);
  const reportPath = o.folder.workspace
    ? join(o.folder.workspace, 'report.md')
    : `report.md of run ${run.id} (the store's copy)`;
  let report: string | null;
  try {
    if (o.store) report = await readRunFile(o.store, o.folder, 'report.md', 'utf8');
    else if (o.folder.workspace) report = readContainedFile(o.folder.workspace, 'report.md', 'utf8');
    else report = null;
  } catch {
    report = null; // absent, or a link the agent planted (never followed)
  }
  const b = scoreBase(run, 'analystbench', o.judge.id, { ...opts });
  if (report === null) {
    return {
      ...b,
      summary: {
        checklistPercent: null,
        hallucinationRate: null,
        figureCoveragePercent: null,
        figureQualityPercent: null,
      },
      detail: { reportPath, error: 'no report.md: agent generation failure' },
      error: `no report at ${reportPath}`,
    };
  }
  const criteria = criteriaFromChecklist(block.hidden.checklist ?? []);
  const instruction = block.visible.instruction ?? '';
  const checklist = criteria.length
    ? await scoreAnalystChecklist(
        { instruction, response: report, runId: run.id, taskId: block.id },
        criteria,
        o.judge,
        opts,
      )
    : null;
  const sources = readSourcesText(block);
  const retriever = sources.skipped.length ? await docRetriever(block, o) : null;
  try {
    // claims = atomic (issue 43): facts linked to the cells that support them, an expert's split before the judge's
    const atomic =
      opts.claims === 'atomic' && o.store
        ? {
            steps: (await o.store.getSteps(run.id)).map(stepTextOf),
            expert: await expertFactSplits(annotationStoreOf(o.store), run.id).catch(() => new Map<string, string[]>()),
          }
        : {};
    const claims = await scoreAnalystClaims(
      { report, sources: sources.texts, runId: run.id, ...(retriever ? { select: retriever.select } : {}), ...atomic },
      o.judge,
      opts,
    );
    const reference = await referenceFigures(block.hidden.referenceReport);
    const generated = extractFigures(report);
    const figures = await scoreAnalystFigures(
      { reference, generated, instruction, runId: run.id },
      o.embedder ?? lexicalEmbedder(),
      o.judge,
      opts,
    );
    const tallies = [checklist?.judgements, claims.judgements, figures.judgements].filter((t) => !!t);
    const pending = tallies.reduce((s, t) => s + t!.pending, 0);
    return {
      ...b,
      options: {
        ...opts,
        figure_matching: figures.method,
        lexical_fallback: figures.lexicalFallback,
        source_selection: retriever ? 'doc-index bm25 + lexical' : 'lexical',
      },
      pending,
      unjudged: pending + tallies.reduce((s, t) => s + t!.errors, 0),
      summary: {
        checklistPercent: checklist?.percent ?? null,
        hallucinationRate: claims.rate,
        figureCoveragePercent: figures.coverage,
        figureQualityPercent: figures.quality,
        claims: claims.claims.length,
        ...(claims.facts ? { atomicFacts: claims.facts.length } : {}),
        referenceFigures: reference.length,
        generatedFigures: generated.length,
        reportChars: report.length,
      },
      detail: { checklist, claims, figures, sourcesSkipped: retriever ? [] : sources.skipped },
    };
  } finally {
    retriever?.close();
  }
}

/** Reference figures: markdown images, or "Figure n." captions in the text of a PDF / HTML / text report. */
async function referenceFigures(path: string | undefined): Promise<ReportFigure[]> {
  const bytes = path ? readReferenceReport(path) : null;
  if (!path || !bytes) return [];
  if (/\.(md|markdown)$/i.test(path)) return extractFigures(bytes.toString('utf8'));
  const { extractUnits } = await import('../../docs/index.ts');
  const doc = await extractUnits(path, new Uint8Array(bytes));
  return figureCaptionsFromText(doc.units.join('\n'));
}

/** Claim → passages of the block's documentation (PDFs included) through the documentation index. */
async function docRetriever(
  block: Block,
  o: { log?: Logger },
): Promise<{ select: (claim: string, maxChars: number) => Promise<string>; close: () => void } | null> {
  const roots = new Set(
    block.visible.docs.map((d) => (d.path.endsWith(d.rel) ? d.path.slice(0, d.path.length - d.rel.length) : '\u0000')),
  );
  const [root] = roots;
  if (roots.size !== 1 || !root || root === '\u0000') return null;
  try {
    const { openDocIndex } = await import('../../docs/index.ts');
    const idx = await openDocIndex({ root, files: block.visible.docs.map((d) => d.rel) });
    await idx.build();
    return {
      async select(claim, maxChars) {
        const parts: string[] = [];
        let used = 0;
        for (const h of idx.search(claim, { top: 12 })) {
          const unit = idx.units(h.file)[h.unitIndex]?.text ?? h.snippet;
          const text = `[${h.file} ${h.unit}] ${unit.slice(Math.max(0, h.start - 800), h.end + 800)}`;
          if (used + text.length > maxChars) break;
          parts.push(text);
          used += text.length;
        }
        return parts.join('\n…\n');
      },
      close: () => idx.close(),
    };
  } catch (e) {
    (o.log ?? nullLogger).warn(
      `documentation index unavailable for ${block.id}: ${errorMessage(e)}; claims are checked against text sources only`,
    );
    return null;
  }
}
