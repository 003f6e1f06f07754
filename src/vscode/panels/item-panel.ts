/**
 * The Benchmark Item panel (issue 22): clicking an item in the Benchmarks view shows it as the agent sees it; its
 * ground truth appears only after an explicit "Show ground truth", so a reviewer is not spoiled by accident. One panel,
 * reused for each clicked item (like an editor preview). View model: src/app/item/item-view.ts.
 */
import * as vscode from 'vscode';
import { findBenchmark } from '../../core/benchmarks/registry.ts';
import { itemView } from '../../app/item/item-view.ts';
import { DidChangeStateNotification } from '../../protocol/webview.ts';
import {
  OpenGroundTruthViewRequest,
  ShowItemGroundTruthRequest,
  type ItemTarget,
  type ItemViewState,
} from '../../protocol/item.ts';
import type { LoupeContext } from '../context.ts';
import { suiteRegistry } from '../suites.ts';
import { GroundTruthPanel } from './ground-truth-panel.ts';
import { LoupePanel, PanelHost, SINGLETON } from './panel-base.ts';

export class ItemPanel extends LoupePanel {
  static readonly host = new PanelHost<ItemPanel, typeof SINGLETON>({
    viewType: 'loupe.benchmarkItem',
    title: () => 'Benchmark item',
    create: (ctx, panel) => new ItemPanel(ctx, panel),
    restoreKey: (_ctx, state) => ((state as { target?: ItemTarget } | undefined)?.target ? SINGLETON : undefined),
    restored: async (_ctx, panel, state) => panel.showTarget((state as { target: ItemTarget }).target),
  });
  static readonly viewType = ItemPanel.host.viewType;
  private target: ItemTarget | undefined;
  private revealed = false;

  /** Shows `target` (creating the panel if needed), its ground truth hidden. */
  static async show(ctx: LoupeContext, target: ItemTarget): Promise<ItemPanel> {
    const { panel, created } = ItemPanel.host.show(ctx, SINGLETON, vscode.ViewColumn.Active);
    panel.target = target;
    panel.revealed = false;
    if (!created) await panel.showTarget(target);
    return panel;
  }

  private constructor(ctx: LoupeContext, panel: vscode.WebviewPanel) {
    super(ctx, panel, 'item', 'Benchmark item');
    this.rpc.onRequest(ShowItemGroundTruthRequest, async () => {
      this.revealed = true;
      return this.state();
    });
    this.rpc.onRequest(OpenGroundTruthViewRequest, async () => {
      if (this.target) GroundTruthPanel.show(this.ctx, this.target.kind, this.target.root, this.target.blockId);
    });
  }

  /** Replaces the shown item (ground truth hidden again). */
  async showTarget(target: ItemTarget): Promise<void> {
    this.target = target;
    this.revealed = false;
    this.rpc.notify(DidChangeStateNotification, { state: await this.state() });
  }

  protected async state(): Promise<ItemViewState> {
    const t = this.target;
    if (!t) throw new Error('No benchmark item was chosen: click an item in the Benchmarks view.');
    const found = await suiteRegistry(this.ctx).findBlock(t.kind, t.root, t.blockId);
    if (!found) throw new Error(`The block ${t.blockId} could not be loaded from ${t.root}.`);
    const def = findBenchmark(t.kind);
    this.panel.title = `Item: ${t.itemId} · ${found.block.title}`.slice(0, 80);
    return {
      ...itemView(found.block, t.itemId, {
        reveal: this.revealed,
        suiteTitle: def?.title ?? t.kind,
        hasGroundTruthView: !!def?.groundTruth,
      }),
      target: t,
    };
  }
}
