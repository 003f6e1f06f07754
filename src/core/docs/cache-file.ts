/**
 * The documentation index's cache files and paths, split out of doc-index.ts: where a root's cache lives, the
 * root's file list (LongTA's order), path normalisation and the typed-array blobs of its postings.
 */
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';

/** The cache file of a documentation root in `cacheDir`: `docs-<last two folder names>-<sha1 prefix of the root>.sqlite`. */
export function cacheFileFor(root: string, cacheDir: string): string {
  const h = createHash('sha1').update(root).digest('hex').slice(0, 16);
  const base = root
    .split(sep)
    .filter(Boolean)
    .slice(-2)
    .join('-')
    .replace(/[^A-Za-z0-9._-]/g, '_');
  return join(cacheDir, `docs-${base}-${h}.sqlite`);
}

/** A relative path with `/` separators. */
export function toPosix(p: string): string {
  return p.split(sep).join('/');
}

// A blob read from SQLite is a fresh Buffer nobody else writes: view it in place when aligned, copy otherwise.
/** A blob as Int32Array (a view when 4-byte aligned, else a copy). */
export function bufToInt32(b: Buffer): Int32Array {
  if (b.byteOffset % 4 === 0) return new Int32Array(b.buffer, b.byteOffset, b.byteLength >> 2);
  const copy = new Uint8Array(b.byteLength);
  copy.set(b);
  return new Int32Array(copy.buffer);
}
/** A blob as Uint16Array (a view when 2-byte aligned, else a copy). */
export function bufToUint16(b: Buffer): Uint16Array {
  if (b.byteOffset % 2 === 0) return new Uint16Array(b.buffer, b.byteOffset, b.byteLength >> 1);
  const copy = new Uint8Array(b.byteLength);
  copy.set(b);
  return new Uint16Array(copy.buffer);
}
/** A typed array's bytes as a Buffer (no copy), to store as a blob. */
export function typedToBuf(a: Int32Array | Uint16Array): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

/** Lists files under `dir` recursively, sorted case-insensitively like LongTA's `get_data_and_doc_paths`. */
export function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => {
      const x = a.name.toLowerCase();
      const y = b.name.toLowerCase();
      return x < y ? -1 : x > y ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
    });
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      const abs = join(dir, e.name);
      if (e.isDirectory()) walk(abs);
      else if (e.isFile()) out.push(toPosix(relative(root, abs)));
    }
  };
  walk(root);
  return out;
}

/** Normalises a caller-given doc path to the root-relative posix form, or undefined if it escapes the root. */
export function normalizeRel(root: string, p: string): string | undefined {
  const abs = isAbsolute(p) ? resolve(p) : resolve(root, p);
  const rel = relative(root, abs);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return undefined;
  return toPosix(rel);
}

/** True for SQLite's "not a database" and corruption errors (the cache is then rebuilt). */
export function isCorruptError(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT'));
}
