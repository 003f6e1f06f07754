/**
 * The "Compare two profiles" panel (issue 48): two run profiles of a suite compared paired, with the numbers of
 * `loupe compare` (view model `src/app/compare/compare-view.ts`). The command `loupe.compareProfiles` asks for the
 * suite and the two profiles (quick picks offering only profiles whose runs are all scored), or takes
 * `{ suite, a, b }`. A run id or a disagreeing item opens its runs (as in Results).
 */
import * as vscode from 'vscode';
import { compareChoices, compareView, type SuiteChoice } from '../../app/compare/compare-view.ts';
import { LoupeInputError } from '../../core/util/errors.ts';
import { oneLine } from '../../core/util/text-safety.ts';
import type { CompareResult, CompareViewState } from '../../protocol/compare.ts';
import { OpenRunsRequest } from '../../protocol/results.ts';
import { DidChangeStateNotification } from '../../protocol/webview.ts';
import type { LoupeContext } from '../context.ts';
import { showWarningMessage } from '../messages.ts';
import { LoupePanel, PanelHost, SINGLETON } from './panel-base.ts';
import { openRuns } from './results-panel.ts';

/** What the panel compares: a suite kind and two profiles (as `loupe compare --a/--b` take them). */
export interface CompareTarget {
  suite: string;
  a: string;
  b: string;
}

const isTarget = (x: unknown): x is CompareTarget => {
  const t = x as Partial<CompareTarget> | undefined;
  return typeof t?.suite === 'string' && typeof t.a === 'string' && typeof t.b === 'string';
};

export class ComparePanel extends LoupePanel {
  static readonly host = new PanelHost<ComparePanel, typeof SINGLETON>({
    viewType: 'loupe.compare',
    title: () => 'Compare Profiles',
    create: (ctx, panel) => new ComparePanel(ctx, panel),
    restoreKey: () => SINGLETON,
    // After a window reload: compare the same two profiles again (the webview saved the target).
    restored: async (_ctx, p, state) => {
      const t = (state as { target?: unknown } | undefined)?.target;
      if (isTarget(t)) await p.compare(t);
    },
  });
  #target: CompareTarget | undefined;
  #view: CompareViewState = {};

  /** Opens (or reveals) the panel and compares `target`. @returns the comparison shown, or undefined with the reason shown in the panel. */
  static async show(ctx: LoupeContext, target: CompareTarget): Promise<CompareResult | undefined> {
    const { panel } = ComparePanel.host.show(ctx, SINGLETON);
    return panel.compare(target);
  }

  private constructor(ctx: LoupeContext, panel: vscode.WebviewPanel) {
    super(ctx, panel, 'compare', 'Compare Profiles');
    this.rpc.onRequest(OpenRunsRequest, ({ runIds, label }) => openRuns(ctx, runIds, label));
    // runs re-scored in this window, or another store: compare again
    this.disposables.push(ctx.onDidChangeRuns(() => this.recompare()));
  }

  #busy = false;
  #again = false;

  /** Store changes arrive per step while runs go on: one comparison at a time, and one more after it if runs changed. */
  private recompare(): void {
    if (!this.#target) return;
    if (this.#busy) {
      this.#again = true;
      return;
    }
    this.#busy = true;
    void this.compare(this.#target)
      .catch((e: unknown) => this.ctx.log.warn(`Compare: ${e instanceof Error ? e.message : String(e)}`))
      .finally(() => {
        this.#busy = false;
        if (this.#again) {
          this.#again = false;
          this.recompare();
        }
      });
  }

  /** Computes the comparison from the store and shows it; a refusal (unscored runs, unknown profile) is shown as the panel's message. */
  async compare(target: CompareTarget): Promise<CompareResult | undefined> {
    this.#target = target;
    this.panel.title = `Compare: ${oneLine(target.suite)}`;
    try {
      const result = await compareView(this.ctx.store(), { suite: target.suite, a: target.a, b: target.b });
      this.#view = { result, source: this.ctx.storePath, target };
    } catch (e) {
      if (!(e instanceof LoupeInputError)) throw e;
      this.#view = { message: `Cannot compare: ${e.message}`, source: this.ctx.storePath, target };
    }
    this.rpc.notify(DidChangeStateNotification, { state: this.#view });
    return this.#view.result;
  }

  protected state(): CompareViewState {
    return this.#view;
  }
}

type ProfilePick = vscode.QuickPickItem & { player: string };

async function pickProfiles(choice: SuiteChoice): Promise<CompareTarget | undefined> {
  const items = (skip?: string): ProfilePick[] =>
    choice.profiles
      .filter((p) => p.player !== skip)
      .map((p) => ({
        label: oneLine(p.label),
        description: `${p.runs} scored runs on ${p.blocks} blocks`,
        detail: oneLine(p.player),
        player: p.player,
      }));
  const leftOut = choice.leftOut.length
    ? ` (${choice.leftOut.length} profile${choice.leftOut.length === 1 ? '' : 's'} with unscored runs not offered: score them first)`
    : '';
  const a = await vscode.window.showQuickPick(items(), {
    title: `Compare two profiles of ${choice.title}: profile A${leftOut}`,
    placeHolder: 'Profile A',
    matchOnDetail: true,
  });
  if (!a) return undefined;
  const b = await vscode.window.showQuickPick(items(a.player), {
    title: `Compare with ${a.label}: profile B`,
    placeHolder: 'Profile B (the difference shown is A − B)',
    matchOnDetail: true,
  });
  if (!b) return undefined;
  return { suite: choice.suite, a: a.player, b: b.player };
}

/**
 * The command `loupe.compareProfiles`: arg `{ suite, a, b }` (profiles as `loupe compare` takes them), else quick picks
 * for the suite and two profiles whose runs are all scored. @returns the comparison shown (undefined when cancelled or refused).
 */
export async function compareProfilesCommand(ctx: LoupeContext, arg: unknown): Promise<CompareResult | undefined> {
  if (isTarget(arg)) return ComparePanel.show(ctx, arg);
  const suites = (await compareChoices(ctx.store())).filter((s) => s.profiles.length >= 2);
  if (!suites.length) {
    void showWarningMessage(
      'No suite in the run store has two profiles whose runs are all scored. Score the runs (Results, or Rescore Run) and try again.',
    );
    return undefined;
  }
  let choice: SuiteChoice | undefined = suites.length === 1 ? suites[0] : undefined;
  if (!choice) {
    const pick = await vscode.window.showQuickPick(
      suites.map((s) => ({ label: s.title, description: `${s.profiles.length} comparable profiles`, choice: s })),
      { title: 'Compare two profiles: which benchmark?' },
    );
    choice = pick?.choice;
  }
  if (!choice) return undefined;
  const target = await pickProfiles(choice);
  return target ? ComparePanel.show(ctx, target) : undefined;
}
