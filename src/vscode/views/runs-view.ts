/**
 * The Runs view: suite → block → run (status, agent, model, time, answers), refreshed as runs change. The units of a
 * sweep (issue 27) sit under their sweep instead: sweep → model → block → run, with done / running / failed / queued.
 */
import * as vscode from 'vscode';
import type { RunRecord } from '../../core/agent/types.ts';
import type { LoupeContext } from '../context.ts';
import { RunSession } from '../run/run-session.ts';
import { runHeadlines, type RunHeadline } from '../../app/runs/run-headline.ts';
import { forkTree, runListings, runsWithEveryCallFailed, type RunListing } from '../../app/runs/run-labels.ts';
import type { Suite } from '../../core/suites/types.ts';
import { sweepProgressOf, type SweepModelProgress } from '../../core/runs/sweep.ts';
import { markdownText, oneLine } from '../../core/util/text-safety.ts';
import { applyRunFilter, labelledRun } from '../../app/experiments/filters.ts';
import { scopeRuns } from '../../app/experiments/scope.ts';
import { experimentStoreOf, type RunLabels } from '../../core/store/experiments.ts';
import { currentAnnotator } from '../config.ts';
import { currentRunFilter, currentScope, onDidChangeExperiment, runsViewMessage } from '../experiments.ts';

export type RunsNode =
  | { kind: 'sweep'; sweepId: string; runs: RunRecord[]; counts: SweepModelProgress }
  | { kind: 'sweep-model'; sweepId: string; counts: SweepModelProgress; runs: RunRecord[] }
  | { kind: 'suite'; suite: string; runs: RunRecord[] }
  | {
      kind: 'block';
      suite: string;
      blockId: string;
      runs: RunRecord[];
      /** the group it is under (tree ids stay unique) */ scope: string;
    }
  | {
      kind: 'run';
      run: RunRecord;
      answers: number;
      assisted: boolean;
      interventions?: number;
      headline?: RunHeadline;
      listing?: RunListing;
      forks?: RunsNode[];
      labels?: RunLabels;
    };

const STATUS_ICON: Record<string, [string, string?]> = {
  finished: ['pass', 'testing.iconPassed'],
  running: ['sync~spin', 'progressBar.background'],
  pending: ['circle-outline'],
  budget_exhausted: ['warning', 'editorWarning.foreground'],
  failed: ['error', 'testing.iconFailed'],
  cancelled: ['circle-slash', 'descriptionForeground'],
};

function ago(iso: string | null): string {
  if (!iso) return '';
  const s = (Date.now() - Date.parse(iso)) / 1000;
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  return new Date(iso).toLocaleDateString();
}

export class RunsViewProvider implements vscode.TreeDataProvider<RunsNode>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<RunsNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly ctx: LoupeContext;
  private readonly disposables: vscode.Disposable[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Suites loaded to score judge-free runs live, and those scores by run id + status + steps (issue 22). */
  private readonly suites = new Map<string, Promise<Suite>>();
  private readonly live = new Map<string, RunHeadline>();

  constructor(ctx: LoupeContext) {
    this.ctx = ctx;
    this.disposables.push(
      ctx.onDidChangeRuns(() => this.refreshSoon()),
      RunSession.onDidChange(() => this.refreshSoon()),
      onDidChangeExperiment(() => this.refresh()),
      this.emitter,
    );
  }

  /** The tree view (its message says which experiment and filter the runs are scoped to). */
  view: vscode.TreeView<RunsNode> | undefined;

  /**
   * The runs the view shows: those of the selected experiment (issue 43) that the active filter keeps. A filter or
   * experiment the store cannot evaluate is reported in the log and shows every run of the scope.
   */
  private async scoped(runs: RunRecord[]): Promise<RunRecord[]> {
    let out = scopeRuns(runs, await currentScope(this.ctx));
    const f = currentRunFilter();
    if (f) {
      try {
        out = await applyRunFilter(this.ctx.store(), out, f.spec, { annotator: currentAnnotator() });
      } catch (e) {
        this.ctx.log.warn(`runs view: filter ${f.name}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    if (this.view) this.view.message = runsViewMessage(this.ctx, out.length);
    return out;
  }

  /** Coalesces bursts of changes (one per committed step) into one refresh. */
  refreshSoon(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.emitter.fire(undefined);
    }, 300);
  }

  refresh(): void {
    this.emitter.fire(undefined);
  }

  /**
   * Other processes (the `loupe` CLI, another window) write the same store: while the view is visible, look for
   * changes every `intervalMs` (a cheap fingerprint of run ids, statuses and step counts) and refresh on change.
   */
  watch(view: vscode.TreeView<RunsNode>, intervalMs = 2000): void {
    let last = '';
    const tick = async () => {
      if (!view.visible) return;
      let fp: string;
      try {
        fp = (await this.ctx.store().listRuns({ limit: 5000 })).map((r) => `${r.id}:${r.status}:${r.steps}`).join('|');
      } catch {
        return;
      }
      if (last && fp !== last) this.refreshSoon();
      last = fp;
    };
    const timer = setInterval(() => void tick(), intervalMs);
    this.disposables.push(
      { dispose: () => clearInterval(timer) },
      view.onDidChangeVisibility(() => void tick()),
    );
  }

  async getChildren(node?: RunsNode): Promise<RunsNode[]> {
    let runs: RunRecord[];
    try {
      runs = await this.ctx.store().listRuns({ limit: 5000 });
    } catch (e) {
      this.ctx.log.error(
        `runs view: cannot read the store ${this.ctx.storePath}: ${e instanceof Error ? e.message : String(e)}`,
      );
      return [];
    }
    if (!node) {
      runs = await this.scoped(runs);
      const sweeps = [...new Set(runs.map((r) => r.sweepId).filter((s): s is string => !!s))].sort().reverse();
      const single = runs.filter((r) => !r.sweepId);
      const suites = [...new Set(single.map((r) => r.suite))].sort();
      return [
        ...sweeps.map((sweepId): RunsNode => {
          const of = runs.filter((r) => r.sweepId === sweepId);
          return { kind: 'sweep', sweepId, runs: of, counts: sweepProgressOf(sweepId, of).total };
        }),
        ...suites.map((suite): RunsNode => ({ kind: 'suite', suite, runs: single.filter((r) => r.suite === suite) })),
      ];
    }
    if (node.kind === 'sweep') {
      const p = sweepProgressOf(node.sweepId, node.runs);
      return p.models.map((counts) => ({
        kind: 'sweep-model',
        sweepId: node.sweepId,
        counts,
        runs: node.runs.filter((r) => (r.model ?? r.agent) === counts.model),
      }));
    }
    if (node.kind === 'sweep-model') {
      const blocks = [...new Set(node.runs.map((r) => r.blockId))].sort();
      return blocks.map((blockId) => ({
        kind: 'block',
        suite: node.runs[0]!.suite,
        blockId,
        runs: node.runs.filter((r) => r.blockId === blockId),
        scope: `sweep:${node.sweepId}:${node.counts.model}`,
      }));
    }
    if (node.kind === 'suite') {
      const blocks = [...new Set(node.runs.map((r) => r.blockId))].sort();
      return blocks.map((blockId) => ({
        kind: 'block',
        suite: node.suite,
        blockId,
        runs: node.runs.filter((r) => r.blockId === blockId),
        scope: `suite:${node.suite}`,
      }));
    }
    if (node.kind === 'block') {
      const store = this.ctx.store();
      const ids = node.runs.map((r) => r.id);
      const [answers, assisted, human, headlines, failed, labels] = await Promise.all([
        store.getAnswersOf(ids),
        store.getEventsOf(ids, 'assisted'),
        store.getInterventionsOf(ids),
        this.headlines(node.runs),
        runsWithEveryCallFailed(store, node.runs),
        this.labels(ids),
      ]);
      // issue 42: profile + repeat, short id and start time tell runs apart; forks sit under the run they came from
      const listings = runListings(node.runs, failed);
      const { roots, forks } = forkTree([...node.runs].sort((a, b) => b.createdAt.localeCompare(a.createdAt)));
      const toNode = (run: RunRecord): RunsNode => ({
        kind: 'run',
        run,
        answers: answers.get(run.id)?.length ?? 0,
        assisted: (assisted.get(run.id)?.length ?? 0) > 0 || (human.get(run.id)?.length ?? 0) > 0,
        interventions: human.get(run.id)?.length ?? 0,
        headline: headlines.get(run.id),
        listing: listings.get(run.id),
        forks: (forks.get(run.id) ?? []).map(toNode),
        labels: labels.get(run.id),
      });
      return roots.map(toNode);
    }
    if (node.kind === 'run') return node.forks ?? [];
    return [];
  }

  /** Tags and names of runs (issue 43); none when the store cannot say (logged). */
  private async labels(ids: string[]): Promise<Map<string, RunLabels>> {
    try {
      return await experimentStoreOf(this.ctx.store()).labelsOf(ids);
    } catch (e) {
      this.ctx.log.warn(`runs view: run tags: ${e instanceof Error ? e.message : String(e)}`);
      return new Map();
    }
  }

  /** Headline metrics of runs: stored scores, else judge-free runs scored live once per run state. */
  private async headlines(runs: readonly RunRecord[]): Promise<Map<string, RunHeadline>> {
    const key = (r: RunRecord) => `${r.id}:${r.status}:${r.steps}`;
    try {
      const stored = await runHeadlines(this.ctx.store(), runs, { live: false });
      const toScore = runs.filter((r) => stored.get(r.id)?.text === 'not scored' && !this.live.has(key(r)));
      const scored = toScore.length
        ? await runHeadlines(this.ctx.store(), toScore, { suites: this.suites })
        : new Map<string, RunHeadline>();
      for (const r of toScore) {
        const h = scored.get(r.id);
        if (h) this.live.set(key(r), h);
      }
      for (const r of runs) {
        const h = this.live.get(key(r));
        if (h && stored.get(r.id)?.text === 'not scored') stored.set(r.id, h);
      }
      return stored;
    } catch (e) {
      this.ctx.log.warn(`runs view: headline metrics: ${e instanceof Error ? e.message : String(e)}`);
      return new Map();
    }
  }

  /**
   * The open store in tree ids of groups: VS Code keeps a node's expanded/collapsed state by id, so without it a
   * block collapsed in one store would stay collapsed (its runs hidden) after the window switches to another store.
   */
  private storeKey(): string {
    try {
      return this.ctx.storePath;
    } catch {
      return 'store';
    }
  }

  getTreeItem(node: RunsNode): vscode.TreeItem {
    if (node.kind === 'sweep' || node.kind === 'sweep-model') {
      const c = node.counts;
      const item = new vscode.TreeItem(
        node.kind === 'sweep' ? `sweep ${node.sweepId}` : c.model,
        node.kind === 'sweep' ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed,
      );
      item.id = node.kind === 'sweep' ? `sweep:${node.sweepId}` : `sweep:${node.sweepId}:${c.model}`;
      item.description = `${c.done}/${c.total} done · ${c.running} running · ${c.failed} failed · ${c.queued} queued`;
      item.tooltip =
        node.kind === 'sweep'
          ? `Sweep ${node.sweepId}: ${c.total} units run by workers from the job queue — ${c.done} done, ${c.running} running, ${c.failed} failed, ${c.queued} queued (not started, or waiting to be retried)`
          : `${c.model} in sweep ${node.sweepId}: ${c.done} of ${c.total} units done, ${c.running} running, ${c.failed} failed, ${c.queued} queued`;
      item.iconPath = new vscode.ThemeIcon(
        node.kind === 'sweep' ? 'server-process' : 'hubot',
        c.failed ? new vscode.ThemeColor('testing.iconFailed') : undefined,
      );
      item.contextValue = node.kind;
      return item;
    }
    if (node.kind === 'suite') {
      const item = new vscode.TreeItem(node.suite, vscode.TreeItemCollapsibleState.Expanded);
      item.description = `${node.runs.length} run${node.runs.length === 1 ? '' : 's'}`;
      item.id = `${this.storeKey()}|suite:${node.suite}`;
      item.iconPath = new vscode.ThemeIcon('beaker');
      item.contextValue = 'suite';
      return item;
    }
    if (node.kind === 'block') {
      const item = new vscode.TreeItem(
        node.blockId,
        node.runs.length <= 3 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed,
      );
      item.description = `${node.runs.length} run${node.runs.length === 1 ? '' : 's'}`;
      item.id = `${this.storeKey()}|${node.scope}|block:${node.suite}:${node.blockId}`;
      item.iconPath = new vscode.ThemeIcon('package');
      item.contextValue = 'block';
      return item;
    }
    const r = node.run;
    const live = RunSession.get(r.id);
    const running = r.status === 'running' && live !== undefined && !live.result;
    const flag = !running ? (node.listing?.flag ?? null) : null;
    const [icon, color] = flag
      ? ['warning', 'testing.iconFailed']
      : (STATUS_ICON[running ? 'running' : r.status] ?? ['circle-outline']);
    // The headline value sits in the label (the sidebar is narrow); its name and source in the description and tooltip.
    const value = node.headline?.short ? ` · ${node.headline.short}` : '';
    const shown = labelledRun(
      node.labels,
      node.listing ? node.listing.label : r.agent === 'reference' ? 'reference' : (r.model ?? r.agent),
    );
    const name = oneLine(shown.label, 100);
    const item = new vscode.TreeItem(
      `${name}${value} · ${running ? 'running' : (node.listing?.status ?? r.status)}`,
      node.forks?.length ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None,
    );
    item.id = `run:${r.id}`;
    // The run's headline metric (issue 22); answers only where the benchmark records them (a BLADE run has none).
    const metric = node.headline ? `${node.headline.text} · ` : '';
    item.description = `${shown.tags ? `${oneLine(shown.tags, 100)} · ` : ''}${node.listing ? `${node.listing.ident} · ` : ''}${metric}${r.steps} steps${node.answers ? ` · ${node.answers} answers` : ''}${node.assisted ? ' · assisted' : ''}${r.params.forkOf ? ` · fork@${r.params.forkOf.step}` : ''} · ${ago(r.startedAt ?? r.createdAt)}`;
    item.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
    const md = new vscode.MarkdownString(undefined, true);
    // Stored names and reasons may be hostile (an MCP client's name, an agent's text in a reason): Markdown-escaped (issue 38).
    md.appendMarkdown(`**${markdownText(r.blockId)}** · run \`${r.id}\`\n\n`);
    if (node.labels?.name) md.appendMarkdown(`named **${markdownText(node.labels.name)}**\n\n`);
    if (node.labels?.tags.length) {
      md.appendMarkdown(`experiments: ${node.labels.tags.map((t) => markdownText(t)).join(', ')}\n\n`);
    }
    md.appendMarkdown(
      `status **${r.status}**${r.statusReason ? ` — ${markdownText(r.statusReason)}` : ''}${flag ? ` · **${flag}**` : ''}\n\n`,
    );
    if (node.listing) {
      md.appendMarkdown(
        `profile ${markdownText(node.listing.profile.label)} (\`${node.listing.profile.player.paramsHash}\`), repeat ${node.listing.profile.repeat} of ${node.listing.profile.repeats} on this block\n\n`,
      );
    }
    md.appendMarkdown(
      `agent ${markdownText(r.agent)}${r.model ? ` · model ${markdownText(r.model)}` : ''} · tool set \`${r.toolSet}\` · sandbox \`${r.sandbox}\`\n\n`,
    );
    md.appendMarkdown(
      `${r.steps} steps · ${r.tokens ? `${r.tokens.input} input / ${r.tokens.output} output tokens` : 'tokens unknown (external client)'} · ${(r.durationMs / 1000).toFixed(1)} s${r.costUsd != null ? ` · $${r.costUsd.toFixed(4)}` : ''}\n\n`,
    );
    if (node.headline) md.appendMarkdown(`**${node.headline.text}** — ${node.headline.source}\n\n`);
    md.appendMarkdown(
      `${node.answers} answers recorded${node.assisted ? ` · **assisted** (${node.interventions ? `${node.interventions} hint${node.interventions === 1 ? '' : 's'} or correction${node.interventions === 1 ? '' : 's'} from an analyst` : 'an analyst ran code while the agent was running'}; scored apart)` : ''}`,
    );
    if (r.params.forkOf) {
      md.appendMarkdown(
        `\n\nfork of run \`${r.params.forkOf.runId}\` at step ${r.params.forkOf.step} (steps 1–${r.params.forkOf.step} replayed without model calls)`,
      );
    }
    item.tooltip = md;
    const resumable =
      !running &&
      (r.status === 'cancelled' || r.status === 'failed' || r.status === 'budget_exhausted' || r.status === 'running');
    // Runs of external MCP clients: Loupe can neither resume nor intervene on them (only the client drives them).
    const mcp = r.agent.startsWith('mcp:');
    if (mcp) {
      md.appendMarkdown(
        `\n\ndriven by the MCP client ${markdownText(r.agent.slice(4))}${r.params.mcp?.contained === false ? ' · **uncontained** (the client declared no sandbox of its own; scored apart)' : ''}: it cannot be given hints or resumed from here — Loupe only answers the client's tool calls. Forking it from a step replays the client's calls up to there; Loupe's own agent then continues with a model profile`,
      );
    }
    item.contextValue = mcp
      ? `run.external.${r.status}`
      : running
        ? 'run.running'
        : resumable
          ? 'run.resumable'
          : 'run.done';
    item.command = { command: 'loupe.openTimeline', title: 'Open Trajectory Timeline', arguments: [r.id] };
    return item;
  }

  dispose(): void {
    clearTimeout(this.timer);
    while (this.disposables.length) this.disposables.pop()?.dispose();
  }
}
