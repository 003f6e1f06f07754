/**
 * The one context object built at activation. Everything with extension lifetime is owned here
 * and disposed with the extension.
 */
import { join } from 'node:path';
import * as vscode from 'vscode';
import { parseStoreLocation, storePassword, type StoreLocation } from '../core/store/location.ts';
import { openStoreLazily } from '../core/store/open.ts';
import { watchStoreChanges } from '../core/store/pg-run-store.ts';
import type { RunStore } from '../core/store/run-store.ts';
import type { Logger } from '../core/util/log.ts';
import { readSettings, storePasswordSecretName, type LoupeSettings } from './config.ts';
import { windowFolderContext, type FolderContext } from './folder-context.ts';

export class LoupeContext implements vscode.Disposable {
  readonly extension: vscode.ExtensionContext;
  readonly output: vscode.LogOutputChannel;
  /** Core-facing logger over the "Loupe" log channel. */
  readonly log: Logger;
  private readonly disposables: vscode.Disposable[] = [];
  private openedStore: { path: string; store: RunStore; unwatch?: () => void } | undefined;
  private readonly storeChanged = new vscode.EventEmitter<void>();
  /** Fires when runs were added, changed or deleted through this window. */
  readonly onDidChangeRuns = this.storeChanged.event;
  private readonly annotationsChanged = new vscode.EventEmitter<void>();
  /** Fires when annotations were added to a team store, by this window or a colleague's (LISTEN/NOTIFY; a SQLite store has no such feed). */
  readonly onDidChangeAnnotations = this.annotationsChanged.event;
  private readonly storeSwitched = new vscode.EventEmitter<void>();
  /**
   * Fires when the run store in use is another one: the setting `loupe.store` (or the runs directory) now names another
   * store, or the store was reopened (a new team store password). What shows a stored run reads it again from
   * {@link store}; the runs views refresh (`onDidChangeRuns` fires too).
   */
  readonly onDidSwitchStore = this.storeSwitched.event;
  /** Stores held by runs in progress (see holdStore), and those to close when their last holder releases them. */
  private readonly storeHolds = new Map<RunStore, number>();
  private readonly closeWhenReleased = new Set<RunStore>();
  private readonly stepsCommitted = new vscode.EventEmitter<{ runId: string; ended: boolean }>();
  /**
   * Fires right after a run driven in this window committed a step to the store (`ended`: the run ended): what shows
   * that run live (the Timeline) reads the store now instead of at its next poll. Runs written by other processes (a
   * `loupe run` in a terminal, a team store run on another machine) fire nothing: they are seen by polling.
   */
  readonly onDidCommitSteps = this.stepsCommitted.event;

  constructor(extension: vscode.ExtensionContext) {
    this.extension = extension;
    this.folderContext = windowFolderContext(extension.globalState);
    this.output = vscode.window.createOutputChannel('Loupe', { log: true });
    this.register(this.output);
    const o = this.output;
    this.log = {
      trace: (m, ...a) => o.trace(m, ...a),
      debug: (m, ...a) => o.debug(m, ...a),
      info: (m, ...a) => o.info(m, ...a),
      warn: (m, ...a) => o.warn(m, ...a),
      error: (m, ...a) => o.error(m, ...a),
    };
    let shown = this.storePathOrError();
    this.register(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration('loupe.store') && !e.affectsConfiguration('loupe.runsDirectory')) return;
        const now = this.storePathOrError();
        if (now === shown) return;
        shown = now;
        this.storeSwitched.fire();
        this.storeChanged.fire();
      }),
    );
  }

  /** {@link storePath}, or the message of a setting that is not a store location (compared to notice a switch). */
  private storePathOrError(): string {
    try {
      return this.storePath;
    } catch (e) {
      return `invalid: ${e instanceof Error ? e.message : String(e)}`;
    }
  }

  /** This window's task / run workspace context (issue 22), read once at activation. */
  readonly folderContext: FolderContext | undefined;

  /** The settings, with a task / run workspace window's suite and runs directory where its own settings have none. */
  get settings(): LoupeSettings {
    const s = readSettings();
    const fc = this.folderContext;
    if (!fc) return s;
    return { ...s, suites: s.suites.length ? s.suites : fc.suites, runsDirectory: s.runsDirectory || fc.runsDirectory };
  }

  /** Folder for run workspaces and the run store: setting `loupe.runsDirectory` or global storage. */
  get runsDirectory(): string {
    return this.settings.runsDirectory || vscode.Uri.joinPath(this.extension.globalStorageUri, 'runs').fsPath;
  }

  /** The documentation index cache the panels and the runs share (Documentation Search prebuilds it): global storage. */
  get docsCacheDirectory(): string {
    return vscode.Uri.joinPath(this.extension.globalStorageUri, 'docs-index').fsPath;
  }

  /**
   * Where the run store is: the setting `loupe.store` (a team store URL, parsed once; a URL is never a path), else
   * `<runsDirectory>/runs.sqlite` (the CLI's `--store` can point at the same file or URL).
   * @throws LoupeInputError naming the setting's value (without any password) when it is not a store location.
   */
  get storeLocation(): StoreLocation {
    const value = this.settings.store;
    return value
      ? parseStoreLocation(value, this.runsDirectory)
      : { engine: 'sqlite', file: join(this.runsDirectory, 'runs.sqlite') };
  }

  /** The run store as shown in messages: its file, or its URL (never a password). */
  get storePath(): string {
    const loc = this.storeLocation;
    return loc.engine === 'sqlite' ? loc.file : loc.url;
  }

  /**
   * The run store, opened on first use (and reopened when `loupe.store` or the runs directory changed). A team store
   * connects on its first call; its password comes from SecretStorage (Loupe: Set Team Store Password), else the
   * URL's `passwordEnv` variable or `PGPASSWORD`.
   */
  store(): RunStore {
    const loc = this.storeLocation;
    const path = loc.engine === 'sqlite' ? loc.file : loc.url;
    if (this.openedStore?.path !== path) {
      this.reopenStore();
      const secrets = this.extension.secrets;
      const store = openStoreLazily(
        loc,
        loc.engine === 'postgres'
          ? { password: async () => (await secrets.get(storePasswordSecretName(loc.url))) ?? storePassword(loc) }
          : {},
      );
      // A team store announces what colleagues write (LISTEN/NOTIFY): views refresh within a fraction of a second.
      let timer: NodeJS.Timeout | undefined;
      let annTimer: NodeJS.Timeout | undefined;
      const unwatch = watchStoreChanges(store, (c) => {
        if ((c.kind === 'annotation' || c.kind === 'reconnected') && !annTimer) {
          annTimer = setTimeout(() => {
            annTimer = undefined;
            this.annotationsChanged.fire();
          }, 200);
        }
        if (timer) return;
        timer = setTimeout(() => {
          timer = undefined;
          this.storeChanged.fire();
        }, 200);
      });
      this.openedStore = {
        path,
        store,
        ...(unwatch
          ? {
              unwatch: () => {
                unwatch();
                if (timer) clearTimeout(timer);
                if (annTimer) clearTimeout(annTimer);
              },
            }
          : {}),
      };
    }
    return this.openedStore.store;
  }

  /**
   * The run store for work that must finish where it started (a run in progress writes its steps there): the store
   * stays open until `release()`, also when `loupe.store` names another store meanwhile (views switch at once; the
   * old store is closed when its last holder releases it).
   */
  holdStore(): { store: RunStore; release(): void } {
    const store = this.store();
    this.storeHolds.set(store, (this.storeHolds.get(store) ?? 0) + 1);
    let released = false;
    return {
      store,
      release: () => {
        if (released) return;
        released = true;
        const n = (this.storeHolds.get(store) ?? 1) - 1;
        if (n > 0) {
          this.storeHolds.set(store, n);
          return;
        }
        this.storeHolds.delete(store);
        if (this.closeWhenReleased.delete(store)) void store.close();
      },
    };
  }

  /** Closes the open store so the next {@link store} call reconnects (after a new password was set); fires {@link onDidSwitchStore}. */
  reopenStore(): void {
    this.closeStore();
    this.storeSwitched.fire();
  }

  private closeStore(): void {
    this.openedStore?.unwatch?.();
    const store = this.openedStore?.store;
    // a store a run in progress still writes to is closed when that run lets go of it (see holdStore)
    if (store && this.storeHolds.has(store)) this.closeWhenReleased.add(store);
    else void store?.close();
    this.openedStore = undefined;
  }

  /** Tells live views of `runId` that it committed a step (or ended) in this window: see {@link onDidCommitSteps}. */
  fireStepsCommitted(runId: string, ended = false): void {
    this.stepsCommitted.fire({ runId, ended });
  }

  /** Tells views that the store changed. */
  fireRunsChanged(): void {
    this.storeChanged.fire();
  }

  register<T extends vscode.Disposable>(d: T): T {
    this.disposables.push(d);
    return d;
  }

  dispose(): void {
    this.closeStore();
    for (const held of this.closeWhenReleased) void held.close();
    this.closeWhenReleased.clear();
    this.storeHolds.clear();
    this.storeChanged.dispose();
    this.annotationsChanged.dispose();
    this.storeSwitched.dispose();
    this.stepsCommitted.dispose();
    while (this.disposables.length) {
      try {
        this.disposables.pop()?.dispose();
      } catch (e) {
        console.error('Loupe: dispose failed', e);
      }
    }
  }
}
