/**
 * The configured benchmark suites (`loupe.suites`), loaded on demand with the core loaders and cached until the
 * setting changes. Shared by the Benchmarks view, "Open Task as Workspace" and the Documentation Search panel.
 */
import * as vscode from 'vscode';
import { benchmarkOfFolder, loadSuite, type Block, type Suite } from '../core/benchmarks/index.ts';
import { inSettingsTerms, type SuiteSetting } from './config.ts';
import type { LoupeContext } from './context.ts';

/** A configured suite and its load result (the suite, or why it failed). */
export interface SuiteEntry {
  setting: SuiteSetting;
  /** Stable key of the setting: `<suite>|<root>|<entities>`. */
  key: string;
  suite?: Suite;
  error?: string;
}

/** The kind a manifest folder declares, or '' when it has none or it is invalid (never throws). */
function manifestKind(root: string): string {
  try {
    return benchmarkOfFolder(root)?.kind ?? '';
  } catch {
    return '';
  }
}

export function suiteKey(s: SuiteSetting): string {
  return `${s.suite}|${s.root}|${s.entities ?? ''}`;
}

const registries = new WeakMap<LoupeContext, SuiteRegistry>();

/** The one registry of this extension context (created on first use, disposed with the context). */
export function suiteRegistry(ctx: LoupeContext): SuiteRegistry {
  let r = registries.get(ctx);
  if (!r) {
    r = ctx.register(new SuiteRegistry(ctx));
    registries.set(ctx, r);
  }
  return r;
}

export class SuiteRegistry implements vscode.Disposable {
  private readonly ctx: LoupeContext;
  private readonly cache = new Map<string, Promise<SuiteEntry>>();
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when `loupe.suites` changed or {@link refresh} was called. */
  readonly onDidChange = this.changed.event;
  private readonly subscription: vscode.Disposable;

  constructor(ctx: LoupeContext) {
    this.ctx = ctx;
    this.subscription = vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('loupe.suites')) this.refresh();
    });
  }

  /** The configured suites, in setting order. */
  settings(): SuiteSetting[] {
    // issue 44: an entry without "suite" is a folder holding a benchmark manifest; its kind is read from there ('' when
    // the manifest is missing or invalid: load() then says why)
    return this.ctx.settings.suites
      .filter((s) => s && typeof s.root === 'string' && (typeof s.suite === 'string' || s.suite === undefined))
      .map((s) => (typeof s.suite === 'string' && s.suite ? s : { ...s, suite: manifestKind(s.root) }));
  }

  /** Loads (or returns the cached) suite of a setting. Never throws: failures come back as `error`. */
  load(setting: SuiteSetting): Promise<SuiteEntry> {
    const key = suiteKey(setting);
    let p = this.cache.get(key);
    if (!p) {
      p = (async (): Promise<SuiteEntry> => {
        const t0 = Date.now();
        try {
          const fromFolder = benchmarkOfFolder(setting.root); // registers a manifest folder's benchmark; throws its file, line and field
          if (!setting.suite && !fromFolder) {
            throw new Error(
              `${setting.root} holds no benchmark manifest (loupe-benchmark.yaml or loupe-benchmark.json): add one, or name the benchmark with "suite" in this entry of the setting loupe.suites`,
            );
          }
          const suite = await loadSuite(setting.suite || fromFolder!.kind, setting.root, {
            log: this.ctx.log,
            entities: setting.entities,
          });
          this.ctx.log.info(
            `loaded ${setting.suite} suite ${setting.root}: ${suite.blocks.length} blocks in ${Date.now() - t0} ms`,
          );
          return { setting, key, suite };
        } catch (e) {
          const error = inSettingsTerms(e instanceof Error ? e.message : String(e));
          this.ctx.log.warn(`could not load ${setting.suite} suite ${setting.root}: ${error}`);
          return { setting, key, error };
        }
      })();
      this.cache.set(key, p);
    }
    return p;
  }

  /** All configured suites, loaded. */
  loadAll(): Promise<SuiteEntry[]> {
    return Promise.all(this.settings().map((s) => this.load(s)));
  }

  /** Finds a block by suite root and id among the configured suites (loading them as needed). */
  async findBlock(
    suiteKind: string,
    root: string,
    blockId: string,
  ): Promise<{ suite: Suite; block: Block } | undefined> {
    for (const s of this.settings()) {
      if (s.suite !== suiteKind) continue;
      const e = await this.load(s);
      if (s.root !== root && e.suite?.root !== root) continue;
      const block = e.suite?.blocks.find((b) => b.id === blockId);
      if (e.suite && block) return { suite: e.suite, block };
    }
    // Not configured (e.g. a run's suite opened from the timeline): load it directly.
    const e = await this.load({ suite: suiteKind as SuiteSetting['suite'], root });
    const block = e.suite?.blocks.find((b) => b.id === blockId);
    return e.suite && block ? { suite: e.suite, block } : undefined;
  }

  /** Drops the cache and tells listeners to reload. */
  refresh(): void {
    this.cache.clear();
    this.changed.fire();
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}
