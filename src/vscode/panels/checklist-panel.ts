/**
 * The checklist editor: one block's expert-authored checklist (DDR facts with their entity and an evidence query run
 * in the block's sandboxed database; AnalystBench-style criteria with 1–5 anchors), saved as versions in the run
 * store; history with what changed; a run of the block re-scored against any version. All data goes through the
 * checklist store (src/core/annotations/checklists.ts). Source: issue 15.
 */
import * as vscode from 'vscode';
import {
  activeChecklistItems,
  authoredFromNative,
  ChecklistConflictError,
  checklistStoreOf,
  type AuthoredChecklistItem,
  type ChecklistKey,
} from '../../core/annotations/checklists.ts';
import { checklistEditorState, checklistKeyOf } from '../../app/checklist/editor-state.ts';
import { annotationStoreOf, humanResolver } from '../../core/annotations/index.ts';
import { findBenchmark } from '../../core/benchmarks/registry.ts';
import type { BenchmarkDefinition } from '../../core/benchmarks/types.ts';
import { createJudge, parseJudgeKind } from '../../core/eval/judges/factory.ts';
import { judgementStoreOf } from '../../core/eval/store.ts';
import { saveRunScore, scoreStoredRun } from '../../core/runs/score-stored-run.ts';
import { checkEvidence } from '../../app/checklist/evidence.ts';
import type { Block, Suite } from '../../core/suites/types.ts';
import { errorMessage, LoupeInputError } from '../../core/util/errors.ts';
import {
  LoadVersionRequest,
  RescoreRequest,
  RunEvidenceQueryRequest,
  SaveChecklistRequest,
  type ChecklistEditorState,
  type EditorItem,
  type SaveChecklistResult,
} from '../../protocol/checklist.ts';
import { apiKeySecretName, currentAnnotator } from '../config.ts';
import type { LoupeContext } from '../context.ts';
import { suiteRegistry } from '../suites.ts';
import { LoupePanel, PanelHost } from './panel-base.ts';
import { showErrorMessage, showInformationMessage, showWarningMessage } from '../messages.ts';

/** Panel key: the benchmark kind, the suite root and the block id (a reload finds the block again). */
const keyOf = (kind: string, root: string, blockId: string) => JSON.stringify([kind, root, blockId]);

export class ChecklistPanel extends LoupePanel {
  static readonly host = new PanelHost<ChecklistPanel>({
    viewType: 'loupe.checklist',
    title: (_ctx, key) => `Checklist: ${(JSON.parse(key) as string[])[2]}`,
    create: (ctx, panel, key) => new ChecklistPanel(ctx, panel, key),
    restoreKey: (_ctx, state) => (state as { panelKey?: string } | undefined)?.panelKey,
  });
  static readonly viewType = ChecklistPanel.host.viewType;
  readonly panelKey: string;
  private target: { def: BenchmarkDefinition; suite: Suite; block: Block } | undefined;

  /**
   * Opens the checklist editor of a block.
   * @throws Error in the user's words when the benchmark has no checklists or the block is not found.
   */
  static async open(ctx: LoupeContext, kind: string, root: string, blockId: string): Promise<ChecklistPanel> {
    const def = findBenchmark(kind);
    if (!def?.checklist) {
      throw new Error(
        `${def?.title ?? kind} blocks have no checklist to edit (checklists exist for DDR-Bench and AnalystBench-style tasks).`,
      );
    }
    const found = await suiteRegistry(ctx).findBlock(kind, root, blockId);
    if (!found) throw new Error(`The block ${blockId} is not in the suite at ${root}.`);
    const { panel } = ChecklistPanel.host.show(ctx, keyOf(kind, root, blockId));
    panel.target = { def, ...found };
    panel.panel.title = `Checklist: ${found.block.title}`;
    return panel;
  }

  static get(kind: string, root: string, blockId: string): ChecklistPanel | undefined {
    return ChecklistPanel.host.get(keyOf(kind, root, blockId));
  }

  private constructor(ctx: LoupeContext, panel: vscode.WebviewPanel, key: string) {
    super(ctx, panel, 'checklist', 'Checklist');
    this.panelKey = key;
    this.rpc.onRequest(RunEvidenceQueryRequest, ({ sql }) => this.query(sql));
    this.rpc.onRequest(SaveChecklistRequest, (p) =>
      this.save(p.base, p.items, p.note, p.confirmContradictions === true),
    );
    this.rpc.onRequest(LoadVersionRequest, ({ version }) => this.loadVersion(version));
    this.rpc.onRequest(RescoreRequest, ({ runId, version }) => this.rescore(runId, version));
  }

  private async resolve(): Promise<{ def: BenchmarkDefinition; suite: Suite; block: Block }> {
    if (this.target) return this.target;
    const [kind, root, blockId] = JSON.parse(this.panelKey) as [string, string, string];
    const def = findBenchmark(kind);
    const found = def?.checklist ? await suiteRegistry(this.ctx).findBlock(kind, root, blockId) : undefined;
    if (!def || !found) throw new Error(`The block ${blockId} of ${root} could not be loaded again.`);
    this.target = { def, ...found };
    return this.target;
  }

  private async key(): Promise<ChecklistKey> {
    const { def, suite, block } = await this.resolve();
    return checklistKeyOf(def, suite, block);
  }

  protected async state(): Promise<ChecklistEditorState & { panelKey: string }> {
    const { def, suite, block } = await this.resolve();
    return {
      panelKey: this.panelKey,
      ...(await checklistEditorState(this.ctx.store(), def, suite, block, currentAnnotator())),
    };
  }

  private async query(
    sql: string,
  ): Promise<{ columns: string[]; rows: unknown[][]; rowCount: number; truncated: boolean }> {
    const { def, block } = await this.resolve();
    if (!def.checklist?.evidenceQuery) throw new Error(`${def.title} blocks have no database to query.`);
    if (!sql.trim()) throw new Error('Write a query first (one SELECT statement).');
    try {
      return await def.checklist.evidenceQuery(block, sql, { sandbox: this.ctx.settings.sandbox });
    } catch (e) {
      throw new Error(`The query failed: ${errorMessage(e)}`, { cause: e });
    }
  }

  private async save(
    base: number | null,
    edited: EditorItem[],
    note: string,
    confirmContradictions: boolean,
  ): Promise<SaveChecklistResult> {
    const { def, block } = await this.resolve();
    const problems = def.checklist!.checkItems(block, edited);
    if (problems.length) return { ok: false, problems };
    // issue 42: a refused evidence query is never saved; an answer its evidence contradicts needs the expert's confirmation
    const canQuery = !!def.checklist?.evidenceQuery && def.checklist.evidenceTables(block) !== null;
    const ev = await checkEvidence(edited, canQuery ? (sql) => this.query(sql) : null);
    if (ev.problems.length) return { ok: false, problems: ev.problems };
    if (ev.contradictions.length && !confirmContradictions) return { ok: false, contradictions: ev.contradictions };
    const items = ev.items;
    const author = currentAnnotator();
    try {
      const r = await checklistStoreOf(this.ctx.store()).save(await this.key(), {
        base,
        items: items as AuthoredChecklistItem[],
        author,
        note,
      });
      this.ctx.fireRunsChanged();
      return { ok: true, created: r.created, state: await this.state() };
    } catch (e) {
      if (e instanceof ChecklistConflictError) {
        return {
          ok: false,
          conflict: {
            message: e.message,
            latest: e.latest.version,
            theirs: e.theirs.map((t) => ({ id: t.id, item: (t.item as EditorItem | undefined) ?? null })),
          },
        };
      }
      if (e instanceof LoupeInputError) return { ok: false, problems: [e.message] };
      throw e;
    }
  }

  private async loadVersion(version: number | 'native'): Promise<{ items: EditorItem[]; version: number | null }> {
    const { def, block } = await this.resolve();
    if (version === 'native') {
      return {
        items: authoredFromNative(
          def.checklist!.nativeItems(block),
          def.checklist!.kind,
          def.checklist!.entityOf(block),
        ) as EditorItem[],
        version: null,
      };
    }
    const v = await checklistStoreOf(this.ctx.store()).get(await this.key(), version);
    if (!v) throw new Error(`Version ${version} of this checklist is not in the store.`);
    return { items: v.items as EditorItem[], version: v.version };
  }

  /** Scores a run of this block against a version with the judge of the settings, and saves the score. */
  private async rescore(runId: string, version: number | 'native'): Promise<{ summary: string; checklist: string }> {
    const { def, suite } = await this.resolve();
    return rescoreRun(this.ctx, runId, version, { def, suite });
  }
}

/**
 * Scores a stored run against a checklist version (or the suite's own) with the judge of the settings
 * (`loupe.judge.kind` / `loupe.judge.profile`), saves the score (kept beside scores against other versions) and
 * tells the views. @throws Error in the user's words (a judge setting that names no profile, a run that fails).
 */
export async function rescoreRun(
  ctx: LoupeContext,
  runId: string,
  version: number | 'native' | { groundTruth: number | 'shipped' },
  loaded?: { def: BenchmarkDefinition; suite: Suite },
): Promise<{
  summary: string;
  checklist: string;
  failed?: Array<{ ref: string; question: string; detail: string }>;
  pending?: number;
}> {
  const store = ctx.store();
  const j = ctx.settings.judge;
  let kind;
  try {
    kind = parseJudgeKind(j.kind, 'the setting loupe.judge.kind');
  } catch (e) {
    throw new Error(errorMessage(e), { cause: e });
  }
  const profile = ctx.settings.models.find((m) => m.name === j.profile);
  if ((kind === 'llm' || kind === 'llm+human') && !profile) {
    throw new Error(
      `The judge setting asks for an LLM judge, but no model profile is named "${j.profile}" (setting loupe.judge.profile; profiles: ${ctx.settings.models.map((m) => m.name).join(', ') || 'none'}).`,
    );
  }
  const apiKey = profile ? ((await ctx.extension.secrets.get(apiKeySecretName(profile.name))) ?? '') : '';
  const judge = createJudge(
    { kind, ...(profile ? { model: profile.model, baseUrl: profile.baseUrl, apiKey } : {}) },
    judgementStoreOf(store),
    humanResolver(annotationStoreOf(store)),
  );
  const suites = loaded
    ? new Map([[`${loaded.def.kind}\u0000${loaded.suite.root}`, Promise.resolve(loaded.suite)]])
    : undefined;
  const pick = typeof version === 'object' ? { groundTruth: version.groundTruth } : { checklist: version };
  const s = await scoreStoredRun(store, runId, {
    judge,
    ...pick,
    runsRoot: ctx.runsDirectory,
    ...(suites ? { suites } : {}),
    log: ctx.log,
  });
  if (s.error) throw new Error(`Run ${runId} could not be scored: ${s.error}`);
  await saveRunScore(store, s);
  ctx.fireRunsChanged();
  const def = findBenchmark(s.benchmark);
  const against = s.groundTruth
    ? s.groundTruth.source === 'authored'
      ? `ground truth version ${s.groundTruth.version}`
      : 'the shipped ground truth'
    : s.checklist?.source === 'authored'
      ? `version ${s.checklist.version}`
      : "the suite's own checklist";
  // items judged incorrect, each offered for "Tag failure" (issue 19)
  return {
    summary: def ? def.scoreLine(s) : JSON.stringify(s.summary),
    checklist: against,
    failed: def?.failureAnalysis?.failedItems(s) ?? [],
    pending: s.pending,
  };
}

/**
 * The run a Runs-view command was invoked on, with its benchmark and its block loaded from the suite, or undefined
 * after telling the user why not (no run picked: "pick a run in the Runs view to `purpose`"; a benchmark without
 * `need`: "… runs are not scored against `what`"). @throws Error when the run's block cannot be loaded.
 */
export async function runBlockFromArg<K extends 'checklist' | 'groundTruth'>(
  ctx: LoupeContext,
  arg: unknown,
  need: K,
  purpose: string,
  what: string,
): Promise<
  | {
      run: { id: string; suite: string; blockId: string };
      def: BenchmarkDefinition & { [P in K]-?: NonNullable<BenchmarkDefinition[P]> };
      found: { suite: Suite; block: Block };
    }
  | undefined
> {
  const run = (
    arg as { run?: { id?: string; suite?: string; blockId?: string; params?: { suiteRoot?: string } } } | undefined
  )?.run;
  if (!run?.id || !run.suite || !run.blockId) {
    void showWarningMessage(`Loupe: pick a run in the Runs view to ${purpose}.`);
    return undefined;
  }
  const def = findBenchmark(run.suite);
  if (!def?.[need]) {
    void showWarningMessage(`Loupe: ${def?.title ?? run.suite} runs are not scored against ${what}.`);
    return undefined;
  }
  const found = run.params?.suiteRoot
    ? await suiteRegistry(ctx).findBlock(run.suite, run.params.suiteRoot, run.blockId)
    : undefined;
  if (!found) {
    throw new Error(
      `The block ${run.blockId} of this run could not be loaded from ${run.params?.suiteRoot ?? 'its suite'}.`,
    );
  }
  return {
    run: { id: run.id, suite: run.suite, blockId: run.blockId },
    def: def as BenchmarkDefinition & { [P in K]-?: NonNullable<BenchmarkDefinition[P]> },
    found,
  };
}

/** `loupe.rescoreRunChecklist`: a run (Runs view) re-scored against a checklist version picked from the block's history. */
export async function rescoreRunCommand(ctx: LoupeContext, arg?: unknown): Promise<string | undefined> {
  const got = await runBlockFromArg(ctx, arg, 'checklist', 're-score it against a checklist version', 'a checklist');
  if (!got) return undefined;
  const { run, def, found } = got;
  const versions = await checklistStoreOf(ctx.store()).versions({
    suite: def.kind,
    suiteId: found.suite.id,
    blockId: run.blockId,
  });
  const picks: Array<vscode.QuickPickItem & { version: number | 'native' }> = [
    ...[...versions].reverse().map((v) => ({
      label: `version ${v.version}`,
      description: `${v.author} · ${new Date(v.createdAt).toLocaleString()} · ${activeChecklistItems(v.items).length} items`,
      detail: v.note || undefined,
      version: v.version,
    })),
    {
      label: "the suite's own checklist",
      description: `${def.checklist!.nativeItems(found.block).length} items`,
      version: 'native' as const,
    },
  ];
  const pick = await vscode.window.showQuickPick(picks, {
    title: `Re-score ${run.id} against`,
    matchOnDescription: true,
  });
  if (!pick) return undefined;
  const r = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Loupe: scoring ${run.id}` },
    () => rescoreRun(ctx, run.id, pick.version, { def, suite: found.suite }),
  );
  void showInformationMessage(`Loupe: ${run.blockId} against ${r.checklist}: ${r.summary}`);
  return r.summary;
}

/** `loupe.editChecklist`: from a block of the Benchmarks view, or the block of a run (Runs view). */
export async function editChecklistCommand(ctx: LoupeContext, arg?: unknown): Promise<string | undefined> {
  const a = (arg ?? {}) as {
    suite?: { kind?: string; root?: string } | string;
    block?: { id?: string };
    root?: string;
    blockId?: string;
    run?: { suite?: string; blockId?: string; params?: { suiteRoot?: string } };
  };
  let kind: string | undefined;
  let root: string | undefined;
  let blockId: string | undefined;
  if (a.run) {
    kind = a.run.suite;
    root = a.run.params?.suiteRoot;
    blockId = a.run.blockId;
  } else if (typeof a.suite === 'object' && a.block) {
    kind = a.suite.kind;
    root = a.suite.root;
    blockId = a.block.id;
  } else if (typeof a.suite === 'string') {
    kind = a.suite;
    root = a.root;
    blockId = a.blockId;
  }
  if (!kind || !root || !blockId) {
    // From the palette: pick among the blocks of configured suites that have checklists.
    const entries = (await suiteRegistry(ctx).loadAll()).filter(
      (e) => e.suite && findBenchmark(e.suite.kind)?.checklist,
    );
    if (!entries.length) {
      void showWarningMessage(
        'Loupe: no configured suite has checklists (DDR-Bench or AnalystBench-style). Add one to the setting loupe.suites.',
      );
      return undefined;
    }
    const picks: Array<vscode.QuickPickItem & { benchmark: string; root: string; blockId: string }> = entries.flatMap(
      (e) =>
        e.suite!.blocks.map((b) => ({
          label: b.title,
          description: `${e.suite!.kind} · ${findBenchmark(e.suite!.kind)!.checklist!.nativeItems(b).length} native items`,
          benchmark: e.suite!.kind,
          root: e.suite!.root,
          blockId: b.id,
        })),
    );
    const pick = await vscode.window.showQuickPick(picks, {
      title: 'Edit Checklist: pick a block',
      matchOnDescription: true,
    });
    if (!pick) return undefined;
    kind = pick.benchmark;
    root = pick.root;
    blockId = pick.blockId;
  }
  try {
    await ChecklistPanel.open(ctx, kind, root, blockId);
    return blockId;
  } catch (e) {
    void showErrorMessage(`Loupe: ${errorMessage(e)}`);
    return undefined;
  }
}
