/**
 * The Variables panel (issue 25): a survey's variable catalog as a searchable, virtualised table; a variable's
 * detail with its value codes; "Open codebook page" (Documentation Search panel at the defining page); "Copy as
 * pandas" (a code cell in the run notebook); question mode. The work lives in {@link VariablesService}; this file
 * is the VS Code glue (panel, quick pick, notebook edit, child-process index build).
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { LlmClient } from '../../core/agent/llm.ts';
import { findBenchmark } from '../../core/benchmarks/registry.ts';
import { VariablesService } from '../../app/variables/variables-service.ts';
import type { DocSearchOpenArgs } from '../../protocol/docsearch.ts';
import {
  AskQuestionRequest,
  CopyAsPandasRequest,
  OpenCodebookRequest,
  type VariablesState,
  type VariablesTarget,
} from '../../protocol/variables.ts';
import { DidChangeStateNotification } from '../../protocol/webview.ts';
import { apiKeySecretName, type ModelProfile } from '../config.ts';
import type { LoupeContext } from '../context.ts';
import { suiteRegistry } from '../suites.ts';
import { LoupePanel, PanelHost, SINGLETON } from './panel-base.ts';
import { showWarningMessage } from '../messages.ts';

/** Survey folders (with a docs/ folder) of a root. */
function surveysOf(root: string): string[] {
  try {
    return readdirSync(root)
      .filter((s) => {
        try {
          return statSync(join(root, s, 'docs')).isDirectory();
        } catch {
          return false;
        }
      })
      .sort();
  } catch {
    return [];
  }
}

/** Lets the user pick a survey of a configured suite with documentation. */
async function pickTarget(ctx: LoupeContext): Promise<VariablesTarget | undefined> {
  type Pick = vscode.QuickPickItem & { target?: VariablesTarget };
  const items: Pick[] = [];
  for (const s of suiteRegistry(ctx).settings()) {
    if (!findBenchmark(s.suite)?.docFiles) continue;
    for (const survey of surveysOf(s.root)) {
      items.push({
        label: survey,
        description: s.suite,
        detail: s.root,
        target: { suite: s.suite, root: s.root, survey, title: survey },
      });
    }
  }
  if (!items.length) {
    void showWarningMessage(
      'No configured suite has survey documentation (<SURVEY>/docs folders). Add one to the setting loupe.suites.',
    );
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(items, {
    title: 'Browse Variables',
    placeHolder: 'Which survey?',
    matchOnDetail: true,
  });
  return pick?.target;
}

export class VariablesPanel extends LoupePanel {
  static readonly host = new PanelHost<VariablesPanel, typeof SINGLETON>({
    viewType: 'loupe.variables',
    title: () => 'Variables',
    create: (ctx, panel) => new VariablesPanel(ctx, panel),
    restoreKey: () => SINGLETON,
    // Restores the panel after a window reload from the webview's saved state (its survey).
    restored: (_ctx, p, state) => {
      const t = (state as { target?: VariablesTarget } | undefined)?.target;
      if (t && typeof t.root === 'string' && typeof t.survey === 'string') p.retarget(t, true);
      return Promise.resolve();
    },
  });
  static readonly viewType = VariablesPanel.host.viewType;
  private service: VariablesService | undefined;

  /** Opens the panel on `target` (re-targeting an open panel). */
  static show(ctx: LoupeContext, target: VariablesTarget): VariablesPanel {
    const { panel: p, created } = VariablesPanel.host.show(ctx, SINGLETON);
    p.retarget(target, !created);
    return p;
  }

  private constructor(ctx: LoupeContext, panel: vscode.WebviewPanel) {
    super(ctx, panel, 'variables', 'Variables');
    this.rpc.onRequest(AskQuestionRequest, async ({ question, useModel }) => {
      await this.svc().build();
      if (!useModel) return this.svc().ask(question);
      const d = this.decomposer();
      if ('unavailable' in d) throw new Error(`The model cannot break the question into concepts: ${d.unavailable}`);
      const p = d.profile;
      const apiKey = await this.ctx.extension.secrets.get(apiKeySecretName(p.name));
      const client = new LlmClient({
        baseUrl: p.baseUrl,
        model: p.model,
        apiKey: apiKey ?? undefined,
        temperature: 0,
        maxTokens: p.maxTokens,
        reasoningEffort: p.reasoningEffort,
        maxRetries: 1,
      });
      try {
        return await this.svc().ask(question, {
          label: p.name,
          complete: async (system, user) =>
            (
              await client.complete(
                [
                  { role: 'system', content: system },
                  { role: 'user', content: user },
                ],
                [],
              )
            ).message.content ?? '',
        });
      } catch (e) {
        const m = e instanceof Error ? e.message : String(e);
        throw new Error(`The model profile "${p.name}" (${p.model}) could not break the question into concepts: ${m}`, {
          cause: e,
        });
      }
    });
    // the question-mode toggle follows the model profiles in the settings
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('loupe.models') || e.affectsConfiguration('loupe.variables.profile')) {
          this.rpc.notify(DidChangeStateNotification, { state: this.state() });
        }
      }),
    );
    this.rpc.onRequest(OpenCodebookRequest, ({ name, file }) => this.openCodebook(name, file));
    this.rpc.onRequest(CopyAsPandasRequest, ({ name, file }) => this.copyAsPandas(name, file));
    this.onDisposed(() => this.service?.dispose());
  }

  private svc(): VariablesService {
    if (!this.service) throw new Error('No survey selected.');
    return this.service;
  }

  private retarget(target: VariablesTarget, notify: boolean): void {
    const s = this.service?.target;
    if (s && s.root === target.root && s.survey === target.survey) return;
    this.service?.dispose();
    const cacheDir = this.ctx.docsCacheDirectory;
    const cli = join(this.ctx.extension.extensionUri.fsPath, 'dist', 'cli.js');
    this.service = new VariablesService(target, {
      cacheDir,
      onState: (state) => this.rpc.notify(DidChangeStateNotification, { state: this.withDecomposer(state) }),
      // PDF extraction in a child process (`loupe index`), so the extension host never blocks on it
      prebuild: existsSync(cli) ? () => this.prebuild(cli, target, cacheDir) : undefined,
      onPrebuildError: (e) =>
        this.ctx.log.warn(
          `variables: index in a child process failed, building in the extension host: ${e instanceof Error ? e.message : String(e)}`,
        ),
    });
    this.panel.title = `Variables: ${target.survey}`;
    void this.service.build();
    if (notify) this.rpc.notify(DidChangeStateNotification, { state: this.state() });
  }

  /**
   * The model profile that breaks questions into concepts: the one named by loupe.variables.profile, else the first
   * of loupe.models; why there is none otherwise (in the words of the settings).
   */
  private decomposer(): { profile: ModelProfile } | { unavailable: string } {
    const { models, variablesProfile } = this.ctx.settings;
    if (variablesProfile) {
      const p = models.find((m) => m.name === variablesProfile);
      return p
        ? { profile: p }
        : {
            unavailable: `the setting loupe.variables.profile names "${variablesProfile}", which is not a profile of loupe.models (${models.map((m) => m.name).join(', ') || 'none yet'}).`,
          };
    }
    return models[0]
      ? { profile: models[0] }
      : { unavailable: 'no model profile is configured: add one to the setting loupe.models.' };
  }

  private withDecomposer(s: VariablesState): VariablesState {
    const d = this.decomposer();
    return {
      ...s,
      decomposer: 'profile' in d ? { profile: d.profile.name, model: d.profile.model } : { unavailable: d.unavailable },
    };
  }

  private prebuild(cli: string, t: VariablesTarget, cacheDir: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [cli, 'index', '--root', t.root, '--survey', t.survey, '--cache', cacheDir],
        {
          env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let tail = '';
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (d: string) => {
        tail = (tail + d).slice(-2000);
      });
      child.on('error', reject);
      child.on('exit', (code) =>
        code === 0
          ? resolve()
          : reject(new Error(`loupe index exited with ${code}: ${tail.trim().split('\n').slice(-2).join(' | ')}`)),
      );
    });
  }

  protected state(): VariablesState {
    return this.withDecomposer(
      this.service?.state() ?? { status: 'idle', variables: [], problems: [], coverage: { columns: 0, documented: 0 } },
    );
  }

  private async openCodebook(name: string, file: string): Promise<void> {
    const svc = this.svc();
    const v = svc.variable(name, file);
    if (!v.doc || !v.page) throw new Error(`${name} has no documentation: it is only in the data file ${file}.`);
    // the Documentation Search panel on the survey's own folder (its docs only are indexed quickly; paths `docs/…`)
    const t = svc.target;
    const prefix = `${t.survey}/`;
    const rel = v.doc.startsWith(prefix) ? v.doc.slice(prefix.length) : v.doc;
    const root = v.doc.startsWith(prefix) ? join(t.root, t.survey) : t.root;
    const args: DocSearchOpenArgs = {
      target: { suite: 'folder', root, title: `${t.title} codebooks` },
      query: name,
      mode: 'keyword',
      files: [rel],
      select: { file: rel, unit: v.page },
    };
    await vscode.commands.executeCommand('loupe.searchDocumentation', args);
  }

  /** Inserts the snippet as a code cell at the end of the visible run notebook; else puts it on the clipboard. */
  private async copyAsPandas(
    name: string,
    file: string,
  ): Promise<{ where: 'notebook' | 'clipboard'; snippet: string }> {
    const snippet = this.svc().snippet(name, file);
    const editors = vscode.window.visibleNotebookEditors;
    const editor =
      editors.find((e) => e.notebook.uri.path.endsWith('/notebook.ipynb')) ??
      vscode.window.activeNotebookEditor ??
      editors[0];
    if (!editor) {
      await vscode.env.clipboard.writeText(snippet);
      return { where: 'clipboard', snippet };
    }
    const nb = editor.notebook;
    const edit = new vscode.WorkspaceEdit();
    edit.set(nb.uri, [
      vscode.NotebookEdit.insertCells(nb.cellCount, [
        new vscode.NotebookCellData(vscode.NotebookCellKind.Code, snippet.trimEnd(), 'python'),
      ]),
    ]);
    await vscode.workspace.applyEdit(edit);
    const range = new vscode.NotebookRange(nb.cellCount - 1, nb.cellCount);
    editor.revealRange(range, vscode.NotebookEditorRevealType.InCenterIfOutsideViewport);
    return { where: 'notebook', snippet };
  }
}

/** The command `loupe.browseVariables`: args `{ root, survey }` (optional; without them the user picks a survey). */
export async function browseVariablesCommand(ctx: LoupeContext, arg: unknown): Promise<boolean> {
  const a = arg as Partial<VariablesTarget> | undefined;
  let target: VariablesTarget | undefined;
  if (a && typeof a.root === 'string' && typeof a.survey === 'string') {
    const setting = suiteRegistry(ctx)
      .settings()
      .find((s) => s.root === a.root);
    target = {
      suite: a.suite ?? setting?.suite ?? 'folder',
      root: a.root,
      survey: a.survey,
      title: a.title ?? a.survey,
    };
  }
  target ??= await pickTarget(ctx);
  if (!target) return false;
  VariablesPanel.show(ctx, target);
  return true;
}
