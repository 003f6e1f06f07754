/**
 * The documentation index's extraction pool, split out of doc-index.ts (issue 23): unit extraction in worker
 * threads with bounded concurrency, per-file time limits and a fallback in the calling thread.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { LoupeInputError, errorMessage } from '../util/errors.ts';
import { extractUnits } from './units.ts';
import type { PdfExtractor } from './pdf.ts';
import type { UnitKind } from './types.ts';

export const WORKER_CRASHED = 'extraction worker crashed (out of memory?): the file was not read';
/** Longest time one file may take in an extraction worker before the worker is stopped (ms; `$LOUPE_EXTRACT_FILE_MS`). */
const fileTimeLimitMs = (): number =>
  Number(process.env.LOUPE_EXTRACT_FILE_MS) > 0 ? Number(process.env.LOUPE_EXTRACT_FILE_MS) : 300_000;

export type ExtractResult = { doc?: { kind: UnitKind; units: string[]; note?: string }; error?: string };

/**
 * The extraction worker's file: `extract-worker.ts` beside this file when running from source, the bundled
 * `dist/extract-worker.js` (built by esbuild.js, shipped in the .vsix) when running from the CLI or extension
 * bundles (issue 23: `--workers` did nothing in the shipped CLI and extension). `$LOUPE_EXTRACT_WORKER` overrides.
 * @returns the absolute path, or undefined when none exists (extraction then runs in the calling thread).
 */
export function extractWorkerPath(): string | undefined {
  const env = process.env.LOUPE_EXTRACT_WORKER;
  if (env && existsSync(env)) return env;
  const here = typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, 'extract-worker.ts'), join(here, 'extract-worker.js')];
  for (let up = here, i = 0; i < 4; i++, up = dirname(up)) candidates.push(join(up, 'dist', 'extract-worker.js'));
  return candidates.find((c) => existsSync(c));
}

/**
 * Runs unit extraction with bounded concurrency in worker threads (issue 23: never on the calling thread, which in
 * VS Code is the extension host's), created on the first file that needs extracting (a build that reuses everything
 * starts none); in the calling thread only with `size` 0 or when no worker module exists (see
 * {@link extractWorkerPath}). `submit` waits for a free slot; results are handed to their callback in this thread
 * (SQLite writes stay here). A worker that crashes is replaced by extraction in this thread for its file.
 */
export class ExtractPool {
  private readonly size: number;
  private readonly inThread: boolean;
  private readonly signal: AbortSignal | undefined;
  private readonly workers: Worker[] = [];
  private readonly idle: Worker[] = [];
  private inflight = new Set<Promise<void>>();
  private nextId = 1;
  private waiting = new Map<number, (r: ExtractResult) => void>();
  private readonly pdfExtractor: PdfExtractor;
  private readonly file: string | undefined;
  private closed = false;

  constructor(size: number, signal: AbortSignal | undefined, pdfExtractor: PdfExtractor) {
    this.inThread = !(size >= 1);
    this.size = Math.max(1, Math.floor(size) || 1);
    this.signal = signal;
    this.pdfExtractor = pdfExtractor;
    // issue 23: a cancelled build ends its workers now (their jobs fail through 'exit'), not after their current file
    signal?.addEventListener('abort', this.onAbort, { once: true });
    this.file = this.inThread ? undefined : extractWorkerPath();
  }

  /** A new worker while fewer than `size` exist; undefined in this-thread mode or when none can start. */
  private spawn(): Worker | undefined {
    if (!this.file || this.closed || this.workers.length >= this.size) return undefined;
    let w: Worker;
    try {
      // no heap limit: a 192–256 MB limit cut peak RSS (865 → 620 MB) but cost ~35% more CPU in GC.
      w = new Worker(this.file);
    } catch {
      return undefined;
    }
    w.on('message', (m: ExtractResult & { id: number }) => {
      const cb = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      this.idle.push(w);
      cb?.(m);
    });
    w.on('error', () => {
      /* a crashed worker fails its job through 'exit' below */
    });
    w.on('exit', () => {
      const i = this.workers.indexOf(w);
      if (i >= 0) this.workers.splice(i, 1);
      const j = this.idle.indexOf(w);
      if (j >= 0) this.idle.splice(j, 1);
      for (const [id, cb] of [...this.waiting]) {
        if ((w as unknown as { jobs?: Set<number> }).jobs?.has(id)) {
          this.waiting.delete(id);
          const late = (w as unknown as { timedOut?: number }).timedOut;
          cb({
            error: late
              ? `extraction took longer than ${late >= 1000 ? `${Math.round(late / 1000)} s` : `${late} ms`} and was stopped`
              : WORKER_CRASHED,
          });
        }
      }
    });
    this.workers.push(w);
    return w;
  }

  /** Starts extracting `data`; resolves once the job is queued (waits while all slots are busy). */
  async submit(name: string, data: Uint8Array, done: (r: ExtractResult) => void): Promise<void> {
    while (this.inflight.size >= this.size) await Promise.race(this.inflight);
    this.signal?.throwIfAborted();
    const job = this.run(name, data).then((r) => {
      if (!this.signal?.aborted || r.doc) done(r);
    });
    const tracked = job.finally(() => this.inflight.delete(tracked));
    this.inflight.add(tracked);
  }

  private run(name: string, data: Uint8Array): Promise<ExtractResult> {
    const w = this.idle.pop() ?? this.spawn();
    if (!w) return this.runHere(name, data);
    // a file that crashed or stalled its worker is reported failed, never retried on this thread (the extension host's)
    return this.runOn(w, name, data);
  }

  private runHere(name: string, data: Uint8Array): Promise<ExtractResult> {
    return extractUnits(name, data, { signal: this.signal, pdfExtractor: this.pdfExtractor }).then(
      (doc) => ({ doc }),
      (e: unknown) => {
        if (this.signal?.aborted) return { error: 'aborted' };
        return {
          error:
            e instanceof LoupeInputError
              ? e.message.slice(e.subject.length + 2)
              : `extraction failed: ${errorMessage(e)}`,
        };
      },
    );
  }

  private runOn(w: Worker, name: string, data: Uint8Array): Promise<ExtractResult> {
    const id = this.nextId++;
    const jobs = ((w as unknown as { jobs?: Set<number> }).jobs ??= new Set());
    jobs.add(id);
    return new Promise((resolve) => {
      const limit = fileTimeLimitMs();
      const timer = setTimeout(() => {
        (w as unknown as { timedOut?: number }).timedOut = limit;
        void w.terminate();
      }, limit);
      timer.unref();
      this.waiting.set(id, (r) => {
        clearTimeout(timer);
        jobs.delete(id);
        resolve(r);
      });
      const copy = new Uint8Array(data);
      w.postMessage({ id, name, data: copy, pdfExtractor: this.pdfExtractor }, [copy.buffer]);
    });
  }

  /** Waits for every started job (their callbacks have run when this resolves). */
  async drain(): Promise<void> {
    while (this.inflight.size) await Promise.all(this.inflight);
    this.signal?.throwIfAborted();
  }

  /** Waits for every started job without throwing (used before closing on abort or error). */
  async settle(): Promise<void> {
    while (this.inflight.size) await Promise.allSettled(this.inflight);
  }

  private readonly onAbort = (): void => this.close();

  close(): void {
    this.closed = true;
    this.signal?.removeEventListener('abort', this.onAbort);
    for (const w of [...this.workers]) void w.terminate();
    this.workers.length = 0;
    this.idle.length = 0;
  }
}
