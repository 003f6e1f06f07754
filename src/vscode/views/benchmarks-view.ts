/**
 * The Benchmarks view (activity-bar container "Loupe"): configured suites → blocks → items. Blocks show whether
 * they are runnable, with their problems in the tooltip. Refreshes when `loupe.suites` changes.
 */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import { otherVisibleFiles, type Block, type BlockItem, type Suite } from '../../core/benchmarks/index.ts';
import { activeChecklistItems, checklistStoreOf } from '../../core/annotations/checklists.ts';
import { findBenchmark, itemTypeView } from '../../core/benchmarks/registry.ts';
import type { LoupeContext } from '../context.ts';
import { suiteRegistry, type SuiteEntry } from '../suites.ts';

export const BENCHMARKS_VIEW_ID = 'loupe.benchmarks';

export type BenchmarkNode =
  | { kind: 'suite'; entry: SuiteEntry }
  | { kind: 'block'; suite: Suite; block: Block; checklist?: BlockChecklist }
  | { kind: 'item'; suite: Suite; block: Block; item: BlockItem }
  | { kind: 'more'; suite: Suite; block: Block; hidden: number };

/** A block's checklist state (benchmarks with checklists): newest authored version, or the suite's own items. */
export interface BlockChecklist {
  version: number | null;
  items: number;
}

/** At most this many items are listed under a block (a DDR block can have hundreds of checklist-backed entities). */
const MAX_ITEMS = 200;

export function isBlockNode(x: unknown): x is Extract<BenchmarkNode, { kind: 'block' }> {
  return (
    typeof x === 'object' && x !== null && (x as { kind?: unknown }).kind === 'block' && 'block' in x && 'suite' in x
  );
}

export class BenchmarksProvider implements vscode.TreeDataProvider<BenchmarkNode> {
  private readonly ctx: LoupeContext;
  private readonly changed = new vscode.EventEmitter<BenchmarkNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(ctx: LoupeContext) {
    this.ctx = ctx;
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  async getChildren(node?: BenchmarkNode): Promise<BenchmarkNode[]> {
    if (!node) {
      // Issue 22: while configured suites load, the view says so (not "No benchmark suites are configured yet").
      const entries = await vscode.window.withProgress({ location: { viewId: BENCHMARKS_VIEW_ID } }, () =>
        suiteRegistry(this.ctx).loadAll(),
      );
      return entries.map((entry) => ({ kind: 'suite', entry }));
    }
    if (node.kind === 'suite') {
      const suite = node.entry.suite;
      if (!suite) return [];
      const def = findBenchmark(suite.kind);
      if (!def?.checklist) return suite.blocks.map((block) => ({ kind: 'block', suite, block }));
      // Authored checklists of this suite's blocks in one read; a store that cannot be read leaves the suite's own.
      let authored = new Map<string, BlockChecklist>();
      try {
        authored = new Map(
          (await checklistStoreOf(this.ctx.store()).listLatest(suite.id)).map((v) => [
            v.blockId,
            { version: v.version, items: activeChecklistItems(v.items).length },
          ]),
        );
      } catch (e) {
        this.ctx.log.warn(
          `benchmarks view: checklists not read from ${this.ctx.storePath}: ${e instanceof Error ? e.message : String(e)}`,
        );
      }
      return suite.blocks.map((block) => ({
        kind: 'block',
        suite,
        block,
        checklist: authored.get(block.id) ?? { version: null, items: def.checklist!.nativeItems(block).length },
      }));
    }
    if (node.kind === 'block') {
      const items: BenchmarkNode[] = node.block.items
        .slice(0, MAX_ITEMS)
        .map((item) => ({ kind: 'item', suite: node.suite, block: node.block, item }));
      if (node.block.items.length > MAX_ITEMS) {
        items.push({ kind: 'more', suite: node.suite, block: node.block, hidden: node.block.items.length - MAX_ITEMS });
      }
      return items;
    }
    return [];
  }

  getTreeItem(node: BenchmarkNode): vscode.TreeItem {
    switch (node.kind) {
      case 'suite':
        return suiteItem(node.entry);
      case 'block':
        return blockItem(node.suite, node.block, node.checklist);
      case 'item': {
        const t = itemItem(node.block, node.item);
        t.command = { command: 'loupe.showBenchmarkItem', title: 'Show Benchmark Item', arguments: [node] };
        return t;
      }
      case 'more': {
        const t = new vscode.TreeItem(`… ${node.hidden} more items`, vscode.TreeItemCollapsibleState.None);
        t.contextValue = 'more';
        return t;
      }
    }
  }

  getParent(node: BenchmarkNode): BenchmarkNode | undefined {
    if (node.kind === 'suite') return undefined;
    if (node.kind === 'block') return undefined; // suites are re-created on each load; reveal() is not used
    return { kind: 'block', suite: node.suite, block: node.block };
  }
}

function suiteItem(entry: SuiteEntry): vscode.TreeItem {
  const s = entry.suite;
  // issue 44: an entry without "suite" whose manifest failed has no kind yet: name it by its folder
  const label = s ? s.title : `${entry.setting.suite || 'benchmark manifest'}: ${basename(entry.setting.root)}`;
  const t = new vscode.TreeItem(
    label,
    s ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
  );
  t.id = `suite:${entry.key}`;
  t.contextValue = s ? 'suite' : 'suite error';
  if (!s) {
    t.iconPath = new vscode.ThemeIcon('error', new vscode.ThemeColor('problemsErrorIcon.foreground'));
    // the reason itself (a manifest's file, line and field) is shown, not only in the tooltip
    t.description = `failed to load: ${(entry.error ?? '').replace(/\s+/g, ' ').slice(0, 300)}`;
    t.tooltip = new vscode.MarkdownString()
      .appendMarkdown(`**${entry.setting.suite || 'benchmark manifest'}** \`${entry.setting.root}\`\n\n`)
      .appendText(entry.error ?? '');
    return t;
  }
  const runnable = s.blocks.filter((b) => b.runnable).length;
  t.iconPath = new vscode.ThemeIcon('library');
  t.description = `${s.kind} · ${runnable}/${s.blocks.length} runnable`;
  const md = new vscode.MarkdownString();
  md.appendMarkdown(`**${escapeMd(s.title)}**  \n`);
  md.appendMarkdown(
    `${s.kind} · version \`${s.version}\` · ${s.source.kind}${s.source.upstream ? ` from ${escapeMd(s.source.upstream)}` : ''}  \n`,
  );
  md.appendMarkdown(`\`${escapeMd(s.root)}\`\n\n${s.blocks.length} blocks, ${runnable} runnable.`);
  if (s.problems.length) md.appendMarkdown(`\n\n**Problems**\n\n${bullets(s.problems)}`);
  t.tooltip = md;
  return t;
}

function blockItem(suite: Suite, b: Block, checklist?: BlockChecklist): vscode.TreeItem {
  const t = new vscode.TreeItem(
    b.title,
    b.items.length ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
  );
  t.id = `block:${suite.id}:${b.id}`;
  const parts = ['block', b.runnable ? 'runnable' : 'notRunnable'];
  if (b.visible.docs.length) parts.push('docs');
  if (checklist) parts.push('checklist');
  if (findBenchmark(suite.kind)?.groundTruth?.available(b)) parts.push('groundtruth');
  t.contextValue = parts.join(' ');
  const n = b.items.length;
  const noChecklist = !!checklist && checklist.items === 0;
  const list = checklist
    ? noChecklist
      ? ' · no checklist'
      : ` · checklist ${checklist.version ? `v${checklist.version}, ` : ''}${checklist.items}`
    : '';
  t.description = `${n} item${n === 1 ? '' : 's'}${list}${b.runnable ? '' : ' · not runnable'}`;
  if (!b.runnable) t.iconPath = new vscode.ThemeIcon('error', new vscode.ThemeColor('problemsErrorIcon.foreground'));
  else if (b.problems.length || noChecklist) {
    t.iconPath = new vscode.ThemeIcon('warning', new vscode.ThemeColor('problemsWarningIcon.foreground'));
  } else t.iconPath = new vscode.ThemeIcon('pass', new vscode.ThemeColor('testing.iconPassed'));
  const md = new vscode.MarkdownString();
  md.appendMarkdown(`**${escapeMd(b.title)}**  \n\`${b.id}\`\n\n`);
  md.appendMarkdown(b.runnable ? '$(pass) Runnable' : '$(error) Not runnable');
  md.appendMarkdown(
    `  \n${b.visible.data.length} data files · ${b.visible.docs.length} documentation files${otherVisibleFiles(b)
      .map((f) => ` · ${escapeMd(f.rel)}`)
      .join('')}`,
  );
  if (checklist) {
    md.appendMarkdown(
      checklist.items === 0
        ? '  \n$(warning) No checklist: runs of this block cannot be scored until one is written (Edit Checklist).'
        : `  \nChecklist: ${checklist.items} items (${checklist.version ? `authored version ${checklist.version}` : 'the suite\u2019s own'})`,
    );
  }
  const gt = findBenchmark(suite.kind)?.groundTruth?.summary(b);
  if (gt) md.appendMarkdown(`  \n${gt}`);
  if (b.problems.length) md.appendMarkdown(`\n\n**Problems**\n\n${bullets(b.problems)}`);
  md.supportThemeIcons = true;
  t.tooltip = md;
  return t;
}

function itemItem(b: Block, item: BlockItem): vscode.TreeItem {
  const { label, detail } = describeItem(b, item);
  const t = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.None);
  t.id = `item:${b.suiteId}:${b.id}:${item.id}`;
  t.contextValue = `item ${item.type}`;
  t.description = item.id;
  t.iconPath = new vscode.ThemeIcon(itemTypeView(b.suite, item)?.icon ?? 'question');
  t.tooltip = new vscode.MarkdownString().appendText(detail);
  return t;
}

/** Label and tooltip text of an item, as its benchmark describes its type (never the hidden answer); its id when the benchmark does not. */
export function describeItem(b: Block, item: BlockItem): { label: string; detail: string } {
  return itemTypeView(b.suite, item)?.describe(item) ?? { label: item.id, detail: item.id };
}

function bullets(lines: string[]): string {
  const shown = lines.slice(0, 12).map((p) => `- ${escapeMd(p)}`);
  if (lines.length > 12) shown.push(`- … ${lines.length - 12} more`);
  return shown.join('\n');
}

function escapeMd(s: string): string {
  return s.replace(/[\\`*_{}[\]()#+!|<>]/g, (c) => `\\${c}`);
}

/** Creates the view and keeps it in sync with the suite registry. */
export function registerBenchmarksView(ctx: LoupeContext): BenchmarksProvider {
  // The view's welcome text: "Loading…" when suites are configured, the how-to when none are (package.json viewsWelcome).
  const setConfigured = () =>
    void vscode.commands.executeCommand(
      'setContext',
      'loupe.suitesConfigured',
      suiteRegistry(ctx).settings().length > 0,
    );
  setConfigured();
  const provider = new BenchmarksProvider(ctx);
  const view = ctx.register(
    vscode.window.createTreeView(BENCHMARKS_VIEW_ID, { treeDataProvider: provider, showCollapseAll: true }),
  );
  ctx.register(
    suiteRegistry(ctx).onDidChange(() => {
      setConfigured();
      provider.refresh();
    }),
  );
  ctx.register(ctx.onDidChangeRuns(() => provider.refresh())); // a saved checklist version changes a block's description
  void view;
  return provider;
}
