/**
 * Downloads a benchmark from its official source (`benchmarks/<suite>/source.json`): progress,
 * resume of partial files (HTTP Range), size and SHA-256 verification where known. A file that
 * fails verification is deleted and never moved into place. A mirror (`--mirror URL`) replaces the
 * scheme and host of every upstream URL and keeps the path (the upstream URL layout).
 * Source: issue 3 "Download".
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  createReadStream,
  existsSync,
  openSync,
  writeSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { LoupeInputError, errorMessage } from '../util/errors.ts';
import { nullLogger, type Logger } from '../util/log.ts';
import { FETCH_STAMP, type FetchStamp } from './stamp.ts';
import { globMatcher } from './glob.ts';
import type { Progress } from './types.ts';

/** One file of a suite source. */
export interface SourceFile {
  url: string;
  /** Destination path relative to the download folder (POSIX). */
  dest: string;
  size?: number;
  sha256?: string;
}

/** A suite's download definition (`benchmarks/<suite>/source.json`). */
export interface SuiteSourceDef {
  suite: string;
  title: string;
  upstream: string;
  revision: string;
  license?: string;
  /** Folder (relative to the download folder) to pass to `loadSuite`. */
  loadRoot: string;
  files: SourceFile[];
}

/**
 * Reads and checks a source definition file.
 * @throws LoupeInputError naming the file for bad JSON or entries (`files[i]`).
 */
export function readSourceFile(file: string): SuiteSourceDef {
  let j: unknown;
  try {
    j = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new LoupeInputError(file, `invalid source definition: ${errorMessage(e)}`);
  }
  const s = j as SuiteSourceDef;
  if (!s || !Array.isArray(s.files) || typeof s.suite !== 'string') {
    throw new LoupeInputError(file, 'expected {suite, files: [...]}');
  }
  s.files.forEach((f, i) => {
    if (typeof f.url !== 'string' || typeof f.dest !== 'string') {
      throw new LoupeInputError(`${file} files[${i}]`, 'expected {url, dest}');
    }
  });
  return s;
}

/** Applies a mirror: same path (and query), the mirror's scheme, host and path prefix. */
export function mirrorUrl(url: string, mirror?: string): string {
  if (!mirror) return url;
  const u = new URL(url);
  return `${mirror.replace(/\/+$/, '')}${u.pathname}${u.search}`;
}

export type FileStatus = 'downloaded' | 'resumed' | 'present' | 'failed' | 'missing';

export interface FetchFileResult {
  dest: string;
  url: string;
  status: FileStatus;
  bytes: number;
  verified: 'sha256' | 'size' | 'none';
  reason?: string;
}

export interface FetchResult {
  suite: string;
  dest: string;
  /** Folder to pass to `loadSuite`. */
  loadRoot: string;
  files: FetchFileResult[];
  ok: boolean;
}

export interface FetchOptions {
  mirror?: string;
  /** Only files whose `dest` matches one of these globs. */
  only?: string[];
  log?: Logger;
  onProgress?: (p: Progress) => void;
  /** Attempts per file on network errors (each resumes). Default 3. */
  attempts?: number;
  fetchImpl?: typeof fetch;
}

async function sha256File(p: string): Promise<string> {
  const h = createHash('sha256');
  await pipeline(createReadStream(p), h);
  return h.digest('hex');
}

async function verify(
  p: string,
  f: SourceFile,
): Promise<{ ok: boolean; how: FetchFileResult['verified']; reason?: string }> {
  const size = statSync(p).size;
  if (f.size !== undefined && size !== f.size) {
    return { ok: false, how: 'size', reason: `size ${size} bytes, expected ${f.size}` };
  }
  if (f.sha256) {
    const got = await sha256File(p);
    if (got !== f.sha256.toLowerCase()) {
      return { ok: false, how: 'sha256', reason: `sha256 ${got} does not match ${f.sha256}` };
    }
    return { ok: true, how: 'sha256' };
  }
  return { ok: true, how: f.size !== undefined ? 'size' : 'none' };
}

/**
 * Downloads (or completes) a suite into `destDir`.
 * @param def source definition (`getSource` of `benchmarks/registry.ts`). @param destDir download folder.
 * @returns per-file results; `ok` when no file failed or was missing. Writes `.loupe-fetch.json`.
 *   Files already present and verified are kept; a present file failing verification is deleted and
 *   fetched again. Partial downloads are kept as `<file>.part` and resumed with `Range`.
 * @throws LoupeInputError for a bad mirror URL, a dest escaping `destDir`, or an `only` glob matching nothing.
 */
export async function fetchSuite(def: SuiteSourceDef, destDir: string, opts: FetchOptions = {}): Promise<FetchResult> {
  const log = opts.log ?? nullLogger;
  const doFetch = opts.fetchImpl ?? fetch;
  if (opts.mirror) {
    try {
      const m = new URL(opts.mirror);
      if (m.protocol !== 'http:' && m.protocol !== 'https:') throw new Error('not http(s)');
    } catch (e) {
      throw new LoupeInputError('--mirror', `not a URL: ${opts.mirror} (${errorMessage(e)})`);
    }
  }
  const root = resolve(destDir);
  let files = def.files;
  if (opts.only?.length) {
    const ms = opts.only.map((g) => globMatcher(g, '--only'));
    files = files.filter((f) => ms.some((m) => m(f.dest)));
    if (files.length === 0) {
      // Globs match destination paths: show their shape (e.g. LongDA's start with benchmark/).
      const shape = (d: string) => (d.split('/').length > 2 ? `${d.split('/').slice(0, 2).join('/')}/...` : d);
      const tops = [...new Set(def.files.map((f) => shape(f.dest)))].slice(0, 4);
      throw new LoupeInputError(
        '--only',
        `no file of ${def.suite} matches ${opts.only.join(', ')} (globs match paths under --dest, such as ${tops.join(', ')})`,
      );
    }
  }
  const total = files.reduce((n, f) => n + (f.size ?? 0), 0);
  let done = 0;
  const results: FetchFileResult[] = [];
  mkdirSync(root, { recursive: true });
  for (const f of files) {
    const final = resolve(root, f.dest);
    if (!final.startsWith(root + sep)) {
      throw new LoupeInputError(`${def.suite} ${f.dest}`, 'destination escapes the download folder');
    }
    const url = mirrorUrl(f.url, opts.mirror);
    const base = done;
    const report = (n: number) =>
      opts.onProgress?.({ phase: 'download', done: base + n, total: Math.max(total, base + n), message: f.dest });
    const r = await fetchOne(f, final, url, doFetch, opts.attempts ?? 3, report, log);
    results.push(r);
    done = base + (f.size ?? r.bytes);
    report(f.size ?? r.bytes);
    log.info(`${r.status}: ${f.dest}${r.reason ? ` (${r.reason})` : ''}`);
  }
  const stamp: FetchStamp = {
    suite: def.suite,
    upstream: def.upstream,
    revision: def.revision,
    fetchedAt: new Date().toISOString(),
    files: results
      .filter((r) => r.status !== 'failed' && r.status !== 'missing')
      .map((r) => ({
        path: r.dest,
        size: statSync(resolve(root, r.dest)).size,
        ...(def.files.find((x) => x.dest === r.dest)?.sha256
          ? { sha256: def.files.find((x) => x.dest === r.dest)!.sha256! }
          : {}),
      })),
  };
  writeFileSync(join(root, FETCH_STAMP), JSON.stringify(stamp, null, 2));
  const lr = resolve(root, def.loadRoot);
  if (lr !== root && existsSync(lr)) writeFileSync(join(lr, FETCH_STAMP), JSON.stringify(stamp, null, 2));
  return {
    suite: def.suite,
    dest: root,
    loadRoot: lr,
    files: results,
    ok: results.every((r) => r.status !== 'failed' && r.status !== 'missing'),
  };
}

async function fetchOne(
  f: SourceFile,
  final: string,
  url: string,
  doFetch: typeof fetch,
  attempts: number,
  report: (n: number) => void,
  log: Logger,
): Promise<FetchFileResult> {
  const res = (
    status: FileStatus,
    bytes: number,
    verified: FetchFileResult['verified'],
    reason?: string,
  ): FetchFileResult => ({ dest: f.dest, url, status, bytes, verified, ...(reason ? { reason } : {}) });
  if (existsSync(final)) {
    const v = await verify(final, f);
    if (v.ok) return res('present', statSync(final).size, v.how);
    log.warn(`${final}: ${v.reason}; deleting and downloading again`);
    rmSync(final, { force: true });
  }
  mkdirSync(dirname(final), { recursive: true });
  const part = `${final}.part`;
  let resumed = false;
  let lastError = '';
  for (let attempt = 1; attempt <= attempts; attempt++) {
    let have = existsSync(part) ? statSync(part).size : 0;
    if (f.size !== undefined && have > f.size) {
      rmSync(part, { force: true });
      have = 0;
    }
    try {
      const headers: Record<string, string> = {};
      if (have > 0) headers.Range = `bytes=${have}-`;
      const r = await doFetch(url, { headers, redirect: 'follow' });
      if (r.status === 404 || r.status === 410) {
        await r.body?.cancel();
        return res('missing', 0, 'none', `HTTP ${r.status} at ${url}`);
      }
      if (r.status === 416 && have > 0) {
        await r.body?.cancel();
        // The part may already be complete.
      } else if (r.status === 206 || r.status === 200) {
        const append = r.status === 206 && have > 0;
        if (append) {
          const cr = r.headers.get('content-range') ?? '';
          const m = /bytes (\d+)-/.exec(cr);
          if (m && Number(m[1]) !== have) throw new Error(`server resumed at ${m[1]}, expected ${have}`);
          resumed = true;
        }
        if (!append) have = 0;
        if (!r.body) throw new Error('empty response body');
        // Write each chunk synchronously so whatever arrived before a dropped connection is on disk for resume.
        const fd = openSync(part, append ? 'a' : 'w');
        try {
          let n = have;
          for await (const c of Readable.fromWeb(r.body as import('node:stream/web').ReadableStream<Uint8Array>)) {
            writeSync(fd, c as Buffer);
            n += (c as Buffer).length;
            report(n);
          }
        } finally {
          closeSync(fd);
        }
      } else {
        await r.body?.cancel();
        throw new Error(`HTTP ${r.status} at ${url}`);
      }
      const v = await verify(part, f);
      if (!v.ok) {
        rmSync(part, { force: true });
        return res('failed', 0, v.how, `verification failed: ${v.reason}; file discarded`);
      }
      const bytes = statSync(part).size;
      renameSync(part, final);
      return res(resumed ? 'resumed' : 'downloaded', bytes, v.how);
    } catch (e) {
      lastError = errorMessage(e);
      log.warn(`${url}: attempt ${attempt} failed: ${lastError}`);
    }
  }
  return res(
    'failed',
    existsSync(part) ? statSync(part).size : 0,
    'none',
    `${lastError} (partial data kept in ${part} for resume)`,
  );
}
