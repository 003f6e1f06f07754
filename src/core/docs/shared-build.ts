/**
 * One documentation index build per (docs root, file set, cache folder) in this process, shared by the runs that
 * need it and started when a run starts (issue 23: "the first search of a fresh run does not wait for the whole
 * suite"). A run holds a {@link DocIndexLease}; its tools wait for stages of the build, each as little as they need:
 *  - {@link DocIndexLease.file}: one file is current (what `read_doc` and `search_doc` on one file read). A file a tool
 *    call waits for is extracted next, ahead of the rest of the set;
 *  - {@link DocIndexLease.extracted}: every file of the set is current (`search_doc` over all files), without
 *    waiting for the rankers and the catalog;
 *  - {@link DocIndexLease.built}: the build is complete (`retriever`, the variable catalog).
 * Files nobody waits for are extracted smallest first.
 * Every stage gives the answer a complete index gives: a tool never reads a file before this build made it current,
 * and never searches a subset of the files as if it were all of them (deterministic results, no partial answers).
 * When the last lease is released before the build ends, the build is aborted (its extraction workers end at once,
 * the files extracted so far stay in the cache) and the next lease starts a new one. A failed build rejects every
 * stage with its error (each stage promise has a handler: no unhandled rejection) and is forgotten, so the next
 * lease tries again.
 */
import { statSync } from 'node:fs';
import { isAbsolute, join, posix, relative, sep } from 'node:path';
import type { DocIndex } from './types.ts';

/** What a run holds while it may use a shared documentation index. */
export interface DocIndexLease {
  /**
   * The index once `path` is current in it: the file's own extraction (moved to the front of the queue), not the
   * rest of the set. A path that is not a file of the set waits for {@link DocIndexLease.extracted} (the tool then
   * says what it says for an unknown file).
   * @param path the tool's doc path: relative to the docs root (posix or native separators) or absolute.
   * @throws (rejects with) the build's error when the build fails or is aborted.
   */
  file(path: string): Promise<DocIndex>;
  /** The index once every file of the set is current (before the rankers and the catalog are built). Rejects like `file`. */
  extracted(): Promise<DocIndex>;
  /** The index once the build is complete (rankers and variable catalog). Rejects like `file`. */
  built(): Promise<DocIndex>;
  /** Files of the set current so far in this build, and how many the set has. */
  progress(): { ready: number; total: number };
  /** Gives the lease back (idempotent). The last release of an unfinished build aborts it. */
  release(): void;
}

/** How a shared build opens its index (tests pass a fake; the default opens `openDocIndex` with two extraction workers). */
export type OpenIndex = (o: { root: string; files: string[]; cacheDir?: string }) => Promise<DocIndex>;

interface Deferred {
  promise: Promise<DocIndex>;
  resolve(d: DocIndex): void;
  reject(e: unknown): void;
  done: boolean;
}

function deferred(): Deferred {
  let resolve!: (d: DocIndex) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<DocIndex>((a, b) => {
    resolve = a;
    reject = b;
  });
  promise.catch(() => {}); // the error reaches whoever awaits it; nobody awaiting is not an unhandled rejection
  const d: Deferred = {
    promise,
    resolve: (x) => {
      d.done = true;
      resolve(x);
    },
    reject: (e) => {
      d.done = true;
      reject(e);
    },
    done: false,
  };
  return d;
}

class SharedBuild {
  holders = 0;
  readonly files: Set<string>;
  readonly ready = new Set<string>();
  private readonly ac = new AbortController();
  private index: DocIndex | undefined;
  private readonly fileWaits = new Map<string, Deferred>();
  /** files tool calls wait for, most recent last: the build takes the newest pending one first */
  private readonly wanted: string[] = [];
  private readonly extractedD = deferred();
  private readonly builtD = deferred();
  private finished = false;
  private readonly forget: () => void;

  constructor(root: string, files: string[], cacheDir: string | undefined, open: OpenIndex, forget: () => void) {
    this.files = new Set(files.map((f) => f.split(sep).join('/')));
    this.forget = forget;
    const run = async () => {
      const idx = await open({ root, files, ...(cacheDir ? { cacheDir } : {}) });
      this.index = idx;
      if (this.ac.signal.aborted) throw this.ac.signal.reason;
      await idx.build({
        signal: this.ac.signal,
        schedule: {
          next: (pending) => {
            while (this.wanted.length) {
              const w = this.wanted[this.wanted.length - 1]!;
              if (pending.has(w)) return w;
              this.wanted.pop();
            }
            return this.smallest(pending, root);
          },
          fileReady: (rel) => {
            this.ready.add(rel);
            this.fileWaits.get(rel)?.resolve(idx);
          },
          extracted: () => {
            this.extractedD.resolve(idx);
            for (const d of this.fileWaits.values()) d.resolve(idx); // files the build could not stat: their tools say so
          },
        },
      });
      return idx;
    };
    run().then(
      (idx) => {
        this.finished = true;
        this.extractedD.resolve(idx);
        for (const d of this.fileWaits.values()) d.resolve(idx);
        this.builtD.resolve(idx);
      },
      (e: unknown) => {
        this.finished = true;
        this.forget();
        for (const d of [this.extractedD, this.builtD, ...this.fileWaits.values()]) d.reject(e);
        if (this.ac.signal.aborted) this.index?.close();
      },
    );
  }

  private sizes: Map<string, number> | undefined;
  /**
   * Nothing wanted: the smallest pending file (codebooks before the long dietary tables), so the workers are busy with
   * short files when a tool call arrives and its file waits for little; and more files are current early.
   */
  private smallest(pending: ReadonlySet<string>, root: string): string | undefined {
    if (!this.sizes) {
      this.sizes = new Map();
      for (const f of this.files) {
        try {
          this.sizes.set(f, statSync(join(root, f)).size);
        } catch {
          this.sizes.set(f, 0);
        }
      }
    }
    let best: string | undefined;
    let bestSize = Infinity;
    for (const f of pending) {
      const z = this.sizes.get(f) ?? 0;
      if (z < bestSize) {
        best = f;
        bestSize = z;
      }
    }
    return best;
  }

  file(path: string, root: string): Promise<DocIndex> {
    const rel = relOf(path, root);
    if (rel === undefined || !this.files.has(rel) || this.extractedD.done) return this.extractedD.promise;
    let d = this.fileWaits.get(rel);
    if (!d) {
      d = deferred();
      this.fileWaits.set(rel, d);
      if (this.ready.has(rel) && this.index) d.resolve(this.index);
    }
    if (!d.done) this.wanted.push(rel);
    return d.promise;
  }

  extracted(): Promise<DocIndex> {
    return this.extractedD.promise;
  }

  built(): Promise<DocIndex> {
    return this.builtD.promise;
  }

  release(): void {
    this.holders--;
    if (this.holders > 0 || this.finished) return;
    this.forget();
    this.ac.abort(new Error('the documentation index build was cancelled: no run needs it any more'));
  }
}

/** A tool's doc path as the set's relative posix path, or undefined when it leaves the root. */
function relOf(path: string, root: string): string | undefined {
  const p = isAbsolute(path) ? relative(root, path) : path;
  const n = posix.normalize(p.split(sep).join('/')).replace(/^\.\//, '');
  return n === '' || n === '.' || n.startsWith('../') || n === '..' || posix.isAbsolute(n) ? undefined : n;
}

const builds = new Map<string, SharedBuild>();

const defaultOpen: OpenIndex = async (o) => {
  const { openDocIndex } = await import('./index.ts');
  // Two extraction workers: the PDFs of a fresh run are read off the calling thread (the VS Code extension host's).
  return openDocIndex({ ...o, extractWorkers: 2 });
};

/**
 * Takes a lease on the shared build of a docs root's file set, starting the build when none is running or done.
 * Cheap when the build is done (the stages resolve at once).
 * @param root folder the `files` are relative to; `files` the set (relative paths); `cacheDir` the index cache folder
 *   (default: the docs layer's); `open` how the index is opened (default: `openDocIndex`, two extraction workers).
 * @returns a lease; release it when the run ends.
 */
export function acquireDocIndex(
  root: string,
  files: string[],
  cacheDir: string | undefined,
  open: OpenIndex = defaultOpen,
): DocIndexLease {
  const key = JSON.stringify([root, [...files].sort(), cacheDir ?? '']);
  let b = builds.get(key);
  if (!b) {
    const created: SharedBuild = new SharedBuild(root, files, cacheDir, open, () => {
      if (builds.get(key) === created) builds.delete(key);
    });
    b = created;
    builds.set(key, b);
  }
  const build = b;
  build.holders++;
  let held = true;
  return {
    file: (path) => build.file(path, root),
    extracted: () => build.extracted(),
    built: () => build.built(),
    progress: () => ({ ready: build.ready.size, total: build.files.size }),
    release() {
      if (!held) return;
      held = false;
      build.release();
    },
  };
}

/** What a doc tool call reads: one file (the tool's doc path), every file of the set, or the complete index. */
export type DocNeed = { file: string } | 'all files' | 'complete index';

/** How long a doc tool call waited for the index, and how far the build was then (recorded with the step's tool data). */
export interface DocWait {
  waitedFor: string;
  /** ms from the call to the stage it needed */
  waitedMs: number;
  /** files of the set current when the call was answered, of `filesTotal` */
  filesReady: number;
  filesTotal: number;
}

/**
 * Waits for the stage of a lease's build a doc tool call needs (see {@link DocIndexLease}).
 * @param need `{ file }` for `read_doc` / `search_doc` on one file, `'all files'` for `search_doc` over all files,
 *   `'complete index'` for ranked retrieval and the variable catalog.
 * @returns the index and the wait, for the step's record.
 * @throws (rejects with) the build's error.
 */
export async function waitForDocs(lease: DocIndexLease, need: DocNeed): Promise<{ index: DocIndex; wait: DocWait }> {
  const t0 = performance.now();
  const index = await (typeof need === 'object'
    ? lease.file(need.file)
    : need === 'all files'
      ? lease.extracted()
      : lease.built());
  const p = lease.progress();
  return {
    index,
    wait: {
      waitedFor: typeof need === 'object' ? `file ${need.file}` : need,
      waitedMs: Math.round(performance.now() - t0),
      filesReady: p.ready,
      filesTotal: p.total,
    },
  };
}
