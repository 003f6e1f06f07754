/**
 * The Documentation Search panel's host logic without `vscode`: opens the docs index for a target, builds it with
 * progress, answers the webview's requests, and serves only files that are in the index (the webview cannot ask
 * for anything else). The panel (docsearch-panel.ts) wires it to a WebviewPanel; the webview preview harness
 * (test/helpers/webview-preview.ts) drives it directly.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { openDocIndex } from '../../core/docs/index.ts';
import type { DocIndex, IndexReport } from '../../core/docs/index.ts';
import type { Block, Suite } from '../../core/benchmarks/index.ts';
import { LoupeInputError } from '../../core/util/errors.ts';
import type {
  DocFileInfo,
  DocSearchHistoryEntry,
  DocSearchState,
  DocSearchTarget,
  IndexStatus,
  SearchParams,
  SearchResult,
  UnitContent,
} from '../../protocol/docsearch.ts';

/** A resolved target: what to show and which files (relative to `target.root`) it covers. */
export interface ResolvedDocTarget {
  target: DocSearchTarget;
  files?: string[];
}

/** The docs of one block, relative to its suite root. */
export function blockDocTarget(suite: Suite, block: Block): ResolvedDocTarget {
  const title = `${suite.title} · ${block.title}`;
  // Same root and names as the agent's own index (src/core/agent/runner.ts): files are the workspace-relative
  // paths the agent sees (`docs/...`), so a run's recorded searches replay here unchanged.
  const roots = new Set(
    block.visible.docs.map((f) => {
      const p = f.path.split(sep).join('/');
      return p.endsWith(`/${f.rel}`) ? p.slice(0, p.length - f.rel.length - 1) : undefined;
    }),
  );
  const [root] = roots;
  if (roots.size === 1 && root) {
    return {
      target: { suite: suite.kind, root, suiteRoot: suite.root, blockId: block.id, title },
      files: block.visible.docs.map((f) => f.rel),
    };
  }
  return {
    target: { suite: suite.kind, root: suite.root, suiteRoot: suite.root, blockId: block.id, title },
    files: relativeTo(
      suite.root,
      block.visible.docs.map((f) => f.path),
    ),
  };
}

/** The docs of every block of a suite (what any agent of the suite could find). */
export function suiteDocTarget(suite: Suite): ResolvedDocTarget {
  const files = new Set<string>();
  for (const b of suite.blocks) {
    for (const f of relativeTo(
      suite.root,
      b.visible.docs.map((d) => d.path),
    )) {
      files.add(f);
    }
  }
  return { target: { suite: suite.kind, root: suite.root, title: suite.title }, files: [...files].sort() };
}

export interface DocSearchServiceOptions {
  /** Folder for the index cache (one SQLite file per root). */
  cacheDir: string;
  /** Files (relative to `target.root`) the target covers; undefined = everything the index finds under the root. */
  files?: string[];
  onIndex?: (index: IndexStatus, files: DocFileInfo[]) => void;
  /**
   * Builds the cache in another process first (the extension host passes one that runs `loupe index`), so PDF
   * extraction does not block the caller's thread; the in-process build afterwards only reuses the cache.
   * Failures are reported through `onPrebuildError` and the in-process build does the work instead.
   */
  prebuild?: (onProgress: (done: number, total: number, file?: string) => void, signal: AbortSignal) => Promise<void>;
  onPrebuildError?: (e: unknown) => void;
}

export class DocSearchService {
  readonly target: DocSearchTarget;
  private readonly opts: DocSearchServiceOptions;
  private index: DocIndex | undefined;
  private status: IndexStatus = { state: 'idle', done: 0, total: 0, skipped: [] };
  private fileInfos: DocFileInfo[] = [];
  private building: Promise<void> | undefined;
  private abort: AbortController | undefined;

  constructor(target: DocSearchTarget, opts: DocSearchServiceOptions) {
    this.target = target;
    this.opts = opts;
  }

  state(): Pick<DocSearchState, 'target' | 'files' | 'index'> {
    return { target: this.target, files: this.fileInfos, index: this.status };
  }

  /** Opens and builds the index (cheap when nothing changed). Concurrent calls share one build. */
  build(force = false): Promise<void> {
    if (this.building && !force) return this.building;
    this.abort?.abort();
    const abort = (this.abort = new AbortController());
    this.building = (async () => {
      this.setStatus({ state: 'building', done: 0, total: this.opts.files?.length ?? 0, skipped: [] });
      try {
        if (this.opts.prebuild && !this.index) {
          try {
            await this.opts.prebuild((done, total, file) => {
              if (!abort.signal.aborted) {
                this.setStatus({
                  state: 'building',
                  done,
                  total,
                  message: file ? `extract ${file}` : 'extract',
                  skipped: [],
                });
              }
            }, abort.signal);
          } catch (e) {
            if (abort.signal.aborted) return;
            this.opts.onPrebuildError?.(e);
          }
        }
        if (abort.signal.aborted) return;
        this.index ??= await openDocIndex({
          root: this.target.root,
          cacheDir: this.opts.cacheDir,
          files: this.opts.files,
        });
        let last = 0;
        const report = await this.index.build({
          signal: abort.signal,
          onProgress: (p) => {
            const now = Date.now();
            // At most ~10 updates a second reach the webview.
            if (p.phase !== 'done' && now - last < 100) return;
            last = now;
            this.setStatus({
              state: 'building',
              done: p.done,
              total: p.total,
              message: p.file ? `${p.phase} ${p.file}` : p.phase,
              skipped: [],
            });
          },
        });
        if (abort.signal.aborted) return;
        this.fromReport(report);
      } catch (e) {
        if (abort.signal.aborted) return;
        this.setStatus({
          state: 'error',
          done: 0,
          total: 0,
          message: e instanceof Error ? e.message : String(e),
          skipped: this.status.skipped,
        });
        throw e;
      }
    })();
    this.building.catch(() => undefined);
    return this.building;
  }

  private fromReport(report: IndexReport): void {
    this.fileInfos = report.files
      .map((f) => ({ file: f.file, kind: fileKind(f.file), units: f.units }))
      .sort((a, b) => a.file.localeCompare(b.file));
    this.setStatus({
      state: 'ready',
      done: report.files.length,
      total: report.files.length + report.skipped.length,
      skipped: report.skipped,
    });
  }

  private setStatus(s: IndexStatus): void {
    this.status = s;
    this.opts.onIndex?.(s, this.fileInfos);
  }

  private async ready(): Promise<DocIndex> {
    await this.build();
    if (!this.index) throw new Error('The documentation index is not open');
    return this.index;
  }

  async search(p: SearchParams): Promise<SearchResult> {
    const index = await this.ready();
    const t0 = performance.now();
    const files = p.files?.length ? p.files.filter((f) => this.has(f)) : undefined;
    const hits = index.search(p.query, { mode: p.mode, top: p.top ?? 50, files });
    // The panel shows snippets on word boundaries; the agent's tools keep LongTA's exact windows.
    const unitTexts = new Map<string, string[]>();
    const textOf = (file: string, i: number): string | undefined => {
      let us = unitTexts.get(file);
      if (!us) {
        try {
          us = index.units(file).map((u) => u.text);
        } catch {
          us = [];
        }
        unitTexts.set(file, us);
      }
      return us[i];
    };
    const shown = hits.map((x) => ({
      file: x.file,
      unit: x.unit,
      start: x.start,
      end: x.end,
      score: x.score,
      snippet: wordAlignedSnippet(x.snippet, textOf(x.file, x.unitIndex)),
    }));
    return { hits: collapseNearDuplicates(shown), elapsedMs: performance.now() - t0 };
  }

  async readUnit(file: string, unit: string): Promise<UnitContent> {
    const index = await this.ready();
    this.check(file);
    const u = index.units(file).find((x) => x.label === unit);
    if (!u) throw new LoupeInputError(file, `no unit '${unit}'`);
    const page = /^Page (\d+)$/.exec(unit);
    return { file, unit, text: u.text, page: page && /\.pdf$/i.test(file) ? Number(page[1]) : undefined };
  }

  /** The bytes of an indexed PDF, as a standalone ArrayBuffer (transferable to the webview). */
  async pdfBytes(file: string): Promise<ArrayBuffer> {
    await this.ready();
    this.check(file);
    if (!/\.pdf$/i.test(file)) throw new LoupeInputError(file, 'not a PDF');
    const buf = readFileSync(this.absolute(file));
    return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
  }

  /** Absolute path of an indexed file (after checking it belongs to the index). */
  absolute(file: string): string {
    this.check(file);
    return join(this.target.root, ...file.split('/'));
  }

  private has(file: string): boolean {
    return this.fileInfos.some((f) => f.file === file);
  }

  private check(file: string): void {
    if (!this.has(file)) throw new LoupeInputError(file, 'not a file of this documentation index');
  }

  dispose(): void {
    this.abort?.abort();
    this.index?.close();
    this.index = undefined;
  }
}

/**
 * A snippet cut on word boundaries for display: when the window starts or ends inside a word of the unit's text,
 * the partial word is dropped and an ellipsis marks the cut. Unchanged when the unit text is unknown.
 * @param snippet the window as the index returned it; `unitText` the text of the unit it was taken from.
 */
export function wordAlignedSnippet(snippet: string, unitText: string | undefined): string {
  if (!unitText || !snippet) return snippet;
  const at = unitText.indexOf(snippet);
  if (at < 0) return snippet;
  const word = /[\p{L}\p{N}_]/u;
  let s = snippet;
  let lead = '';
  let tail = '';
  if (at > 0 && word.test(unitText[at - 1]!) && word.test(s[0]!)) {
    const m = /\s/.exec(s);
    if (m && m.index < 30 && m.index + 1 < s.length) {
      s = s.slice(m.index + 1);
      lead = '…';
    }
  }
  const end = at + snippet.length;
  if (end < unitText.length && word.test(unitText[end]!) && word.test(s[s.length - 1]!)) {
    const cut = s.search(/\s\S*$/);
    if (cut > 0 && s.length - cut <= 30) {
      s = s.slice(0, cut);
      tail = '…';
    }
  }
  return lead + s.trimEnd() + tail;
}

/** Words of a snippet for near-duplicate detection (lower case, letters and digits). */
function snippetWords(s: string): Set<string> {
  return new Set(s.toLowerCase().match(/[a-z0-9]+/g) ?? []);
}

/**
 * Collapses near-duplicate hits for the search panel: the same passage repeated across files (e.g. the
 * same methodology paragraph in five Dietary codebooks) is shown once, best-scored first, with the others
 * listed in `alsoIn`. Two snippets are near-duplicates when their word sets overlap with Jaccard ≥ 0.8.
 * Panel only: the agent's tools return every hit as LongTA does.
 * @param hits ranked hits (best first). @returns the kept hits in the same order.
 */
export function collapseNearDuplicates<
  H extends {
    file: string;
    unit: string;
    score: number;
    snippet: string;
    alsoIn?: { file: string; unit: string; score: number }[];
  },
>(hits: readonly H[], threshold = 0.8): H[] {
  const kept: { hit: H; words: Set<string> }[] = [];
  for (const h of hits) {
    const w = snippetWords(h.snippet);
    const dup =
      w.size >= 5
        ? kept.find((k) => {
            let inter = 0;
            for (const x of w) if (k.words.has(x)) inter++;
            return inter / (w.size + k.words.size - inter) >= threshold;
          })
        : undefined;
    if (dup) (dup.hit.alsoIn ??= []).push({ file: h.file, unit: h.unit, score: h.score });
    else kept.push({ hit: { ...h }, words: w });
  }
  return kept.map((k) => k.hit);
}

/**
 * The documentation searches of a recorded run, in order, for replay in the panel: `search_doc` (keyword),
 * `retriever` (LongTA BM25) and `read_doc` (listed with the file and range it opened).
 * @param steps the run's steps (tool calls with their JSON arguments as the model sent them).
 */
export function runSearchHistory(
  steps: { index: number; toolCalls: { name: string; argumentsText: string }[] }[],
): DocSearchHistoryEntry[] {
  const out: DocSearchHistoryEntry[] = [];
  for (const s of steps) {
    for (const c of s.toolCalls) {
      if (!/^(search_doc|retriever|read_doc)$/.test(c.name)) continue;
      let a: Record<string, unknown>;
      try {
        a = JSON.parse(c.argumentsText) as Record<string, unknown>;
      } catch {
        continue;
      }
      const file = typeof a.doc_path === 'string' ? a.doc_path : typeof a.path === 'string' ? a.path : undefined;
      if (c.name === 'read_doc') {
        if (!file) continue;
        out.push({
          label: `step ${s.index + 1} · read_doc ${typeof a.range === 'string' ? a.range : ''}`.trim(),
          query: '',
          mode: 'keyword',
          files: [file],
        });
        continue;
      }
      const query = String(a.keyword ?? a.query ?? '').trim();
      if (!query) continue;
      out.push({
        label: `step ${s.index + 1} · ${c.name}`,
        query,
        mode: c.name === 'retriever' ? 'longta' : 'keyword',
        files: file ? [file] : undefined,
      });
    }
  }
  return out;
}

/** Display kind from the extension: pdf, text, json, csv, xlsx, ... */
export function fileKind(file: string): string {
  const e = extname(file).toLowerCase().replace(/^\./, '');
  if (['txt', 'md', 'py', 'sas', 'r', 'do', 'sps', 'log', 'html', 'htm', 'xml'].includes(e)) return 'text';
  return e || 'text';
}

/** Paths of `abs` files relative to `root` (POSIX separators), resolving symlinks on both sides. */
export function relativeTo(root: string, abs: string[]): string[] {
  let realRoot = root;
  try {
    realRoot = realpathSync(root);
  } catch {
    /* keep as given */
  }
  return abs
    .map((p) => {
      let real = p;
      try {
        real = realpathSync(p);
      } catch {
        /* keep as given */
      }
      return relative(realRoot, real).split(sep).join('/');
    })
    .filter((r) => r && !r.startsWith('..'));
}
