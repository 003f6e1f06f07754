/**
 * The model × question matrix panel (issue 43): a benchmark's items against its run profiles, repeats as dots
 * (view model `src/app/matrix/matrix.ts`). The command `loupe.openMatrix` takes `{ suite, profiles?, filter? }` (the
 * Compare panel opens it narrowed to its two profiles on the disagreeing items), else asks for the benchmark. A dot
 * opens its run in the Timeline at the step that recorded the answer; an item's expected value is revealed on request,
 * never while blind review is on (setting `loupe.annotation.blind`).
 */
import * as vscode from 'vscode';
import {
  expectedOf,
  loadMatrix,
  MATRIX_FILTERS,
  matrixSuites,
  matrixView,
  type LoadedMatrix,
} from '../../app/matrix/matrix.ts';
import { findBenchmark } from '../../core/benchmarks/registry.ts';
import { LoupeInputError } from '../../core/util/errors.ts';
import { oneLine } from '../../core/util/text-safety.ts';
import {
  MatrixExpectedRequest,
  MatrixFilterRequest,
  MatrixOpenDotRequest,
  type MatrixRowFilter,
  type MatrixViewState,
} from '../../protocol/matrix.ts';
import { DidChangeStateNotification } from '../../protocol/webview.ts';
import { annotationSettings } from '../config.ts';
import type { LoupeContext } from '../context.ts';
import { currentScope, onDidChangeExperiment } from '../experiments.ts';
import { showWarningMessage } from '../messages.ts';
import { LoupePanel, PanelHost, SINGLETON } from './panel-base.ts';
import { TimelinePanel } from './timeline-panel.ts';

/** What the panel shows: a suite, optionally narrowed to some profiles (players) and a row filter. */
export interface MatrixTarget {
  suite: string;
  profiles?: string[] | null;
  filter?: MatrixRowFilter;
}

const isTarget = (x: unknown): x is MatrixTarget => typeof (x as Partial<MatrixTarget> | undefined)?.suite === 'string';

export class MatrixPanel extends LoupePanel {
  static readonly host = new PanelHost<MatrixPanel, typeof SINGLETON>({
    viewType: 'loupe.matrix',
    title: () => 'Model × Question Matrix',
    create: (ctx, panel) => new MatrixPanel(ctx, panel),
    restoreKey: () => SINGLETON,
    restored: async (_ctx, p, state) => {
      const t = (state as { target?: unknown } | undefined)?.target;
      if (isTarget(t)) await p.open(t);
    },
  });
  #target: MatrixTarget | undefined;
  #loaded: LoadedMatrix | undefined;
  #revealed = new Set<string>();
  #view: MatrixViewState = { suites: [] };

  /** Opens (or reveals) the panel on `target`. @returns the state shown. */
  static async show(ctx: LoupeContext, target: MatrixTarget): Promise<MatrixViewState> {
    const { panel } = MatrixPanel.host.show(ctx, SINGLETON);
    return panel.open(target);
  }

  private constructor(ctx: LoupeContext, panel: vscode.WebviewPanel) {
    super(ctx, panel, 'matrix', 'Model × Question Matrix');
    this.rpc.onRequest(MatrixFilterRequest, async ({ filter, profiles, suite }) => {
      if (!MATRIX_FILTERS.includes(filter)) throw new Error(`Unknown filter ${oneLine(String(filter))}`);
      if (suite && suite !== this.#target?.suite) return this.open({ suite, profiles: null, filter });
      if (!this.#target) throw new Error('Choose a benchmark first');
      this.#target = { ...this.#target, filter, profiles };
      return this.render();
    });
    this.rpc.onRequest(MatrixExpectedRequest, async ({ key }) => {
      if (!this.#loaded) throw new Error('The matrix is not loaded');
      try {
        const expected = expectedOf(this.#loaded, key, annotationSettings().blind);
        this.#revealed.add(key);
        return { key, expected };
      } catch (e) {
        if (e instanceof LoupeInputError && /blind/.test(e.message)) {
          throw new Error('Blind review is on (setting Loupe › Annotation: Blind): expected values are not shown.', {
            cause: e,
          });
        }
        throw e;
      }
    });
    this.rpc.onRequest(MatrixOpenDotRequest, async ({ runId, stepIndex }) => {
      if (!this.#loaded?.columns.some((c) => c.runIds.includes(runId))) {
        throw new Error('That run is not in the matrix');
      }
      await TimelinePanel.show(this.ctx, runId, {
        focusStep: stepIndex ?? undefined,
        column: vscode.ViewColumn.Beside,
      });
    });
    this.disposables.push(
      ctx.onDidChangeRuns(() => this.reopen()),
      // issue 43: the matrix shows the selected experiment's runs, as the Runs view and Results do
      onDidChangeExperiment(() => this.reopen()),
    );
  }

  #busy = false;
  #again = false;

  /** Store changes arrive per step while runs go on: one load at a time, and one more after it if runs changed. */
  private reopen(): void {
    if (!this.#target) return;
    if (this.#busy) {
      this.#again = true;
      return;
    }
    this.#busy = true;
    void this.open(this.#target)
      .catch((e: unknown) => this.ctx.log.warn(`Matrix: ${e instanceof Error ? e.message : String(e)}`))
      .finally(() => {
        this.#busy = false;
        if (this.#again) {
          this.#again = false;
          this.reopen();
        }
      });
  }

  /** Loads the matrix of `target.suite` from the store and shows it; a refusal is shown as the panel's message. */
  async open(target: MatrixTarget): Promise<MatrixViewState> {
    this.#target = target;
    this.#revealed.clear();
    this.#loaded = undefined;
    const scope = await currentScope(this.ctx);
    const title = oneLine(findBenchmark(target.suite)?.title ?? target.suite);
    this.panel.title = scope.experiment ? `Matrix: ${title} · ${oneLine(scope.experiment)}` : `Matrix: ${title}`;
    try {
      this.#loaded = await loadMatrix(this.ctx.store(), {
        suite: target.suite,
        ...(scope.runIds ? { runs: [...scope.runIds] } : {}),
      });
    } catch (e) {
      if (!(e instanceof LoupeInputError)) throw e;
      this.#view = {
        message: `Cannot show the matrix: ${e.message}`,
        suites: await matrixSuites(this.ctx.store()),
        source: this.ctx.storePath,
      };
      this.rpc.notify(DidChangeStateNotification, { state: this.#view });
      return this.#view;
    }
    return this.render();
  }

  private async render(): Promise<MatrixViewState> {
    const t = this.#target!;
    const blind = annotationSettings().blind;
    if (blind) this.#revealed.clear();
    try {
      const matrix = matrixView(this.#loaded!, {
        filter: t.filter ?? 'all',
        profiles: t.profiles ?? null,
        blind,
        reveal: this.#revealed,
      });
      this.#view = { matrix, suites: await matrixSuites(this.ctx.store()), source: this.ctx.storePath };
    } catch (e) {
      if (!(e instanceof LoupeInputError)) throw e;
      this.#view = {
        message: `Cannot show the matrix: ${e.message}`,
        suites: await matrixSuites(this.ctx.store()),
        source: this.ctx.storePath,
      };
    }
    this.rpc.notify(DidChangeStateNotification, { state: this.#view });
    return this.#view;
  }

  protected state(): MatrixViewState {
    return this.#view;
  }
}

/**
 * The command `loupe.openMatrix`: arg `{ suite, profiles?, filter? }`, else the benchmark is asked for (only
 * benchmarks with per-item outcomes and runs in the store). @returns the state shown (undefined when cancelled).
 */
export async function openMatrixCommand(ctx: LoupeContext, arg: unknown): Promise<MatrixViewState | undefined> {
  if (isTarget(arg)) return MatrixPanel.show(ctx, arg);
  const suites = await matrixSuites(ctx.store());
  if (!suites.length) {
    void showWarningMessage(
      'No benchmark in the run store has runs with per-item scores yet. Run and score a block first.',
    );
    return undefined;
  }
  const suite =
    suites.length === 1
      ? suites[0]
      : (
          await vscode.window.showQuickPick(
            suites.map((s) => ({ label: findBenchmark(s)?.title ?? s, description: s, suite: s })),
            { title: 'Model × Question Matrix: which benchmark?' },
          )
        )?.suite;
  return suite ? MatrixPanel.show(ctx, { suite }) : undefined;
}
