/**
 * The ground-truth view (issue 17): a block's expert ground truth (BLADE: conceptual variables, the transform DAG with
 * alternative branches, models, review rows) at any version in the store, shown only after an explicit reveal. One
 * panel per block. The data comes from the benchmark's `groundTruth.view` (src/core/benchmarks).
 */
import * as vscode from 'vscode';
import { findBenchmark } from '../../core/benchmarks/registry.ts';
import { errorMessage } from '../../core/util/errors.ts';
import { ShowGroundTruthRequest, type GroundTruthState } from '../../protocol/ground-truth.ts';
import type { LoupeContext } from '../context.ts';
import { suiteRegistry } from '../suites.ts';
import { rescoreRun, runBlockFromArg } from './checklist-panel.ts';
import { LoupePanel, PanelHost } from './panel-base.ts';
import { showErrorMessage, showInformationMessage, showWarningMessage } from '../messages.ts';

/** `<kind>\u0000<root>\u0000<block id>` */
type GtKey = string;
const keyOf = (kind: string, root: string, blockId: string): GtKey => `${kind}\u0000${root}\u0000${blockId}`;

export class GroundTruthPanel extends LoupePanel {
  static readonly host = new PanelHost<GroundTruthPanel, GtKey>({
    viewType: 'loupe.groundTruth',
    title: (_ctx, key) => `Ground truth: ${key.split('\u0000')[2]}`,
    create: (ctx, panel, key) => new GroundTruthPanel(ctx, panel, key),
    restoreKey: (_ctx, state) => (state as { key?: string } | undefined)?.key,
  });
  static readonly viewType = GroundTruthPanel.host.viewType;
  readonly key: GtKey;
  private revealed = false;

  static show(ctx: LoupeContext, kind: string, root: string, blockId: string): GroundTruthPanel {
    return GroundTruthPanel.host.show(ctx, keyOf(kind, root, blockId)).panel;
  }

  private constructor(ctx: LoupeContext, panel: vscode.WebviewPanel, key: GtKey) {
    super(ctx, panel, 'groundtruth', 'Ground Truth');
    this.key = key;
    this.rpc.onRequest(ShowGroundTruthRequest, async ({ version }) => {
      this.revealed = true;
      return this.build(version);
    });
  }

  private async build(version: number | 'latest'): Promise<GroundTruthState> {
    const [kind, root, blockId] = this.key.split('\u0000') as [string, string, string];
    const def = findBenchmark(kind);
    const subject = `${def?.title ?? kind} · ${blockId}`;
    if (!this.revealed) return { key: this.key, subject, revealed: false, view: null };
    if (!def?.groundTruth) throw new Error(`${def?.title ?? kind} has no ground truth to show.`);
    const found = await suiteRegistry(this.ctx).findBlock(kind, root, blockId);
    if (!found) throw new Error(`The block ${blockId} could not be loaded from ${root}.`);
    return {
      key: this.key,
      subject,
      revealed: true,
      view: await def.groundTruth.view(this.ctx.store(), found.block, version),
    };
  }

  protected async state(): Promise<GroundTruthState> {
    return this.build('latest');
  }
}

/** `loupe.showGroundTruth`: from a block of the Benchmarks view (a benchmark with ground truth), or picked from the palette. */
export async function showGroundTruthCommand(ctx: LoupeContext, arg?: unknown): Promise<string | undefined> {
  const a = (arg ?? {}) as {
    suite?: { kind?: string; root?: string } | string;
    block?: { id?: string };
    root?: string;
    blockId?: string;
  };
  let kind = typeof a.suite === 'object' ? a.suite.kind : a.suite;
  let root = typeof a.suite === 'object' ? a.suite.root : a.root;
  let blockId = a.block?.id ?? a.blockId;
  if (!kind || !root || !blockId) {
    const entries = (await suiteRegistry(ctx).loadAll()).filter(
      (e) => e.suite && findBenchmark(e.suite.kind)?.groundTruth,
    );
    if (!entries.length) {
      void showWarningMessage(
        'Loupe: no configured suite has a ground truth to show (BLADE). Add one to the setting loupe.suites.',
      );
      return undefined;
    }
    const pick = await vscode.window.showQuickPick(
      entries.flatMap((e) =>
        e.suite!.blocks.map((b) => ({
          label: b.title,
          description: e.suite!.kind,
          benchmark: e.suite!.kind,
          root: e.suite!.root,
          blockId: b.id,
        })),
      ),
      { title: 'Show Ground Truth: pick a dataset', matchOnDescription: true },
    );
    if (!pick) return undefined;
    kind = pick.benchmark;
    root = pick.root;
    blockId = pick.blockId;
  }
  if (!findBenchmark(kind)?.groundTruth) {
    void showWarningMessage(`Loupe: ${findBenchmark(kind)?.title ?? kind} blocks have no ground truth to show.`);
    return undefined;
  }
  try {
    GroundTruthPanel.show(ctx, kind, root, blockId);
    return blockId;
  } catch (e) {
    void showErrorMessage(`Loupe: ${errorMessage(e)}`);
    return undefined;
  }
}

/** `loupe.rescoreRunGroundTruth` (Runs view): scores a run again against a ground-truth version picked from the block's versions; the score is kept beside the others. */
export async function rescoreRunGroundTruthCommand(ctx: LoupeContext, arg?: unknown): Promise<string | undefined> {
  const got = await runBlockFromArg(
    ctx,
    arg,
    'groundTruth',
    're-score it against a ground-truth version',
    'a versioned ground truth',
  );
  if (!got) return undefined;
  const { run, def, found } = got;
  const view = await def.groundTruth.view(ctx.store(), found.block, 'latest');
  const pick = await vscode.window.showQuickPick(
    [...view.versions].reverse().map((v) => ({
      label: v.version === 0 ? 'version 0 (shipped)' : `version ${v.version}`,
      description:
        v.version === 0 ? v.note : `${v.author} · ${v.createdAt.slice(0, 16).replace('T', ' ')} · ${v.changes}`,
      detail: v.version ? v.note || undefined : undefined,
      version: v.version,
    })),
    { title: `Re-score ${run.id} against ground truth` },
  );
  if (!pick) return undefined;
  const r = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Loupe: scoring ${run.id}` },
    () =>
      rescoreRun(
        ctx,
        run.id,
        { groundTruth: pick.version === 0 ? 'shipped' : pick.version },
        { def, suite: found.suite },
      ),
  );
  void showInformationMessage(`Loupe: ${run.blockId} against ${r.checklist}: ${r.summary}`);
  return r.summary;
}
