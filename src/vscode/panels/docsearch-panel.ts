/**
 * The Documentation Search panel: one webview, re-targetable to a suite or a block. The index work lives in
 * {@link DocSearchService}; this file is the VS Code glue (panel, serializer, quick pick, editor reveal).
 *
 * Hook for other panels: `vscode.commands.executeCommand('loupe.searchDocumentation', args: DocSearchOpenArgs)`
 * opens (or re-targets) the panel pre-filled with a query, a hit to select and a list of searches to replay.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { suiteDocFiles } from '../../core/benchmarks/index.ts';
import { findBenchmark } from '../../core/benchmarks/registry.ts';
import type { Block, Suite } from '../../core/benchmarks/index.ts';
import {
  DidChangeIndexNotification,
  DidPrefillNotification,
  GetPdfRequest,
  ReadUnitRequest,
  RebuildIndexRequest,
  RevealFileRequest,
  SearchDocsRequest,
  type DocSearchOpenArgs,
  type DocSearchPrefill,
  type DocSearchState,
  type DocSearchTarget,
} from '../../protocol/docsearch.ts';
import { DidChangeStateNotification } from '../../protocol/webview.ts';
import type { LoupeContext } from '../context.ts';
import { suiteRegistry } from '../suites.ts';
import { LoupePanel, PanelHost, SINGLETON } from './panel-base.ts';
import {
  DocSearchService,
  blockDocTarget,
  runSearchHistory,
  suiteDocTarget,
  type DocSearchServiceOptions,
  type ResolvedDocTarget,
} from '../../app/docsearch/docsearch-service.ts';

/** Resolves a target given by another panel or restored from a serialized webview. */
export async function resolveDocTarget(ctx: LoupeContext, t: DocSearchTarget): Promise<ResolvedDocTarget> {
  if (t.suite === 'folder') return { target: t };
  const reg = suiteRegistry(ctx);
  if (t.blockId) {
    const found = await reg.findBlock(t.suite, t.suiteRoot ?? t.root, t.blockId);
    if (!found) throw new Error(`Block ${t.blockId} not found in ${t.suite} suite ${t.root}`);
    return blockDocTarget(found.suite, found.block);
  }
  const entry = await reg.load({ suite: t.suite as never, root: t.root });
  if (!entry.suite) throw new Error(entry.error ?? `Could not load ${t.suite} suite ${t.root}`);
  return suiteDocTarget(entry.suite);
}

/**
 * A child-process build of the docs cache with `loupe index` (dist/cli.js), when the CLI indexes exactly the
 * target's files (LongDA layouts: `<SURVEY>/docs/**`). PDF extraction then never blocks the extension host.
 */
function cliPrebuild(
  ctx: LoupeContext,
  resolved: ResolvedDocTarget,
  cacheDir: string,
): DocSearchServiceOptions['prebuild'] {
  const { target, files } = resolved;
  const cli = join(ctx.extension.extensionUri.fsPath, 'dist', 'cli.js');
  if (!findBenchmark(target.suite)?.docFiles || !files || !existsSync(cli)) return undefined;
  let cliFiles: string[] | undefined;
  try {
    cliFiles = suiteDocFiles(target.root, target.suite);
  } catch {
    return undefined;
  }
  const want = new Set(files);
  if (!cliFiles || cliFiles.length !== want.size || !cliFiles.every((f) => want.has(f))) return undefined;
  return (onProgress, signal) =>
    new Promise<void>((resolve, reject) => {
      const t0 = Date.now();
      const child = spawn(
        process.execPath,
        [cli, 'index', '--root', target.root, '--suite', target.suite, '--cache', cacheDir],
        { env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' }, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let tail = '';
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (d: string) => {
        tail = (tail + d).slice(-4000);
        for (const m of d.matchAll(/indexing (\d+)\/(\d+) ?([^\n]*)/g)) {
          onProgress(Number(m[1]), Number(m[2]), m[3] || undefined);
        }
      });
      const onAbort = () => child.kill();
      signal.addEventListener('abort', onAbort, { once: true });
      child.on('error', reject);
      child.on('exit', (code) => {
        signal.removeEventListener('abort', onAbort);
        if (code === 0) {
          ctx.log.info(
            `docs index of ${target.root} (${files.length} files) built by loupe index in ${Date.now() - t0} ms`,
          );
          resolve();
        } else reject(new Error(`loupe index exited with ${code}: ${tail.trim().split('\n').slice(-3).join(' | ')}`));
      });
    });
}

/**
 * A run's block among the configured suites (issue 36: never the run's workspace, where the agent could plant a link,
 * FIFO or hard link under a document's name: the panel reads only the suite's own files).
 */
async function runDocTarget(
  ctx: LoupeContext,
  suiteKind: string,
  blockId: string,
  runId: string,
): Promise<ResolvedDocTarget> {
  for (const e of await suiteRegistry(ctx).loadAll()) {
    const block = e.suite?.kind === suiteKind ? e.suite.blocks.find((b) => b.id === blockId) : undefined;
    if (e.suite && block) return blockDocTarget(e.suite, block);
  }
  throw new Error(
    `The documents of run ${runId} (block ${blockId}) are not in any suite of loupe.suites: add the ${suiteKind} suite's folder to loupe.suites to search them`,
  );
}

/** Lets the user pick a suite or a block with documentation. */
export async function pickDocTarget(ctx: LoupeContext): Promise<ResolvedDocTarget | undefined> {
  const entries = await suiteRegistry(ctx).loadAll();
  type Pick = vscode.QuickPickItem & { resolve?: () => ResolvedDocTarget };
  const items: Pick[] = [];
  for (const e of entries) {
    const suite = e.suite;
    if (!suite) continue;
    items.push({ label: suite.title, kind: vscode.QuickPickItemKind.Separator });
    items.push({
      label: `$(library) All documentation of ${suite.title}`,
      description: suite.kind,
      resolve: () => suiteDocTarget(suite),
    });
    for (const b of suite.blocks) {
      if (!b.visible.docs.length) continue;
      items.push({
        label: b.title,
        description: `${b.visible.docs.length} docs`,
        detail: b.id,
        resolve: () => blockDocTarget(suite, b),
      });
    }
  }
  items.push({ label: '', kind: vscode.QuickPickItemKind.Separator });
  items.push({ label: '$(folder) Choose a folder…', resolve: undefined });
  const pick = await vscode.window.showQuickPick(items, {
    title: 'Search Documentation',
    placeHolder: 'Which documentation?',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!pick) return undefined;
  if (pick.resolve) return pick.resolve();
  const folder = await vscode.window.showOpenDialog({
    canSelectFolders: true,
    canSelectFiles: false,
    title: 'Documentation folder',
  });
  const root = folder?.[0]?.fsPath;
  return root ? { target: { suite: 'folder', root, title: root } } : undefined;
}

export class DocSearchPanel extends LoupePanel {
  static readonly host = new PanelHost<DocSearchPanel, typeof SINGLETON>({
    viewType: 'loupe.docsearch',
    title: () => 'Documentation Search',
    create: (ctx, panel) => new DocSearchPanel(ctx, panel),
    restoreKey: () => SINGLETON,
    // Restores the panel after a window reload from the webview's saved state (its target and query).
    restored: async (ctx, p, state) => {
      const t = (state as { target?: DocSearchTarget } | undefined)?.target;
      if (!t || typeof t.root !== 'string') return;
      try {
        p.retarget(await resolveDocTarget(ctx, t), undefined, true);
      } catch (e) {
        ctx.log.warn(
          `Documentation Search: could not restore ${t.title}: ${e instanceof Error ? e.message : String(e)}`,
        );
      }
    },
  });
  static readonly viewType = DocSearchPanel.host.viewType;
  private service: DocSearchService | undefined;
  private prefill: DocSearchPrefill | undefined;

  /** Opens the panel for `resolved` (re-targeting an open panel), optionally pre-filled. */
  static show(ctx: LoupeContext, resolved: ResolvedDocTarget, prefill?: DocSearchPrefill): DocSearchPanel {
    const { panel: p, created } = DocSearchPanel.host.show(ctx, SINGLETON);
    p.retarget(resolved, prefill, !created);
    return p;
  }

  private constructor(ctx: LoupeContext, panel: vscode.WebviewPanel) {
    super(ctx, panel, 'docsearch', 'Documentation Search');
    this.rpc.onRequest(SearchDocsRequest, (p) => this.svc().search(p));
    this.rpc.onRequest(ReadUnitRequest, ({ file, unit }) => this.svc().readUnit(file, unit));
    this.rpc.onRequest(GetPdfRequest, async ({ file }) => ({ file, data: await this.svc().pdfBytes(file) }));
    this.rpc.onRequest(RebuildIndexRequest, async () => {
      await this.svc().build(true);
    });
    this.rpc.onRequest(RevealFileRequest, ({ file, unit }) => this.reveal(file, unit));
    this.onDisposed(() => this.service?.dispose());
  }

  private svc(): DocSearchService {
    if (!this.service) throw new Error('No documentation selected');
    return this.service;
  }

  private retarget(resolved: ResolvedDocTarget, prefill: DocSearchPrefill | undefined, notify: boolean): void {
    const same =
      this.service &&
      this.service.target.root === resolved.target.root &&
      this.service.target.blockId === resolved.target.blockId &&
      this.service.target.suite === resolved.target.suite;
    if (!same) {
      this.service?.dispose();
      const cacheDir = this.ctx.docsCacheDirectory;
      this.service = new DocSearchService(resolved.target, {
        cacheDir,
        files: resolved.files,
        onIndex: (index, files) => this.rpc.notify(DidChangeIndexNotification, { index, files }),
        prebuild: cliPrebuild(this.ctx, resolved, cacheDir),
        onPrebuildError: (e) =>
          this.ctx.log.warn(
            `docs index in a child process failed, building in the extension host: ${e instanceof Error ? e.message : String(e)}`,
          ),
      });
      this.panel.title = `Docs: ${resolved.target.title.split(' · ').pop() ?? resolved.target.title}`;
      void this.service
        .build()
        .catch((e: unknown) =>
          this.ctx.log.error(`docs index ${resolved.target.root}: ${e instanceof Error ? e.message : String(e)}`),
        );
    }
    this.prefill = prefill;
    if (!notify) return;
    if (!same) this.rpc.notify(DidChangeStateNotification, { state: this.stateNow() });
    else if (prefill) this.rpc.notify(DidPrefillNotification, { target: resolved.target, prefill });
  }

  private stateNow(): DocSearchState {
    const s = this.service?.state() ?? { files: [], index: { state: 'idle' as const, done: 0, total: 0, skipped: [] } };
    return { ...s, prefill: this.prefill };
  }

  protected state(): DocSearchState {
    const s = this.stateNow();
    this.prefill = undefined; // a prefill is applied once; a reload restores the webview's own state
    return s;
  }

  private async reveal(file: string, unit?: string): Promise<void> {
    const uri = vscode.Uri.file(this.svc().absolute(file));
    const line = unit ? /^Line (\d+)$/.exec(unit) : null;
    if (/\.(pdf|xlsx?|xpt)$/i.test(file)) {
      await vscode.commands.executeCommand('vscode.open', uri);
      return;
    }
    const doc = await vscode.workspace.openTextDocument(uri);
    const ln = line ? Math.max(0, Number(line[1]) - 1) : 0;
    await vscode.window.showTextDocument(doc, {
      viewColumn: vscode.ViewColumn.Beside,
      selection: new vscode.Range(ln, 0, ln, 0),
      preview: true,
    });
  }
}

/** The command `loupe.searchDocumentation`: args may be a Benchmarks tree block node or {@link DocSearchOpenArgs}. */
export async function searchDocumentationCommand(ctx: LoupeContext, arg: unknown): Promise<boolean> {
  let resolved: ResolvedDocTarget | undefined;
  let prefill: DocSearchPrefill | undefined;
  const a = arg as (Partial<{ kind: string; suite: Suite; block: Block }> & DocSearchOpenArgs) | undefined;
  if (a && a.kind === 'block' && a.block && a.suite && typeof a.suite === 'object') {
    resolved = blockDocTarget(a.suite, a.block);
  } else if (a && a.kind === 'suite' && (a as { entry?: { suite?: Suite } }).entry?.suite) {
    resolved = suiteDocTarget((a as { entry: { suite: Suite } }).entry.suite);
  } else if (a && typeof a === 'object') {
    if (a.target) resolved = await resolveDocTarget(ctx, a.target);
    let history = a.history;
    if (!resolved && typeof a.runId === 'string') {
      const run = await ctx.store().getRun(a.runId);
      if (!run) throw new Error(`No run ${a.runId} in ${ctx.storePath}`);
      resolved = await runDocTarget(ctx, run.suite, run.blockId, run.id);
      history ??= runSearchHistory(await ctx.store().getSteps(run.id));
    }
    const files = a.files ?? (typeof a.file === 'string' ? [a.file] : undefined);
    if (typeof a.query === 'string' || history) {
      prefill = { query: a.query ?? '', mode: a.mode, files, select: a.select, history };
    }
  }
  resolved ??= await pickDocTarget(ctx);
  if (!resolved) return false;
  DocSearchPanel.show(ctx, resolved, prefill);
  return true;
}
