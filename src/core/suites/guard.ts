/**
 * Leakage guard: every path an agent or a tool asks for is resolved against the block's visible
 * set. Refused: `..` segments, NUL bytes, absolute paths outside the visible files / workspace,
 * symlinks whose real target is not a visible file, and anything that is (or resolves to) a hidden
 * resource. Source: issue 3 "Leakage guard".
 */
import { realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { LoupeInputError } from '../util/errors.ts';
import type { Block, VisibleFile } from './types.ts';

/** Thrown when a requested path is not part of the block's visible set. `subject` is the path as asked. */
export class PathNotVisibleError extends LoupeInputError {
  constructor(requested: string, reason: string) {
    super(requested, `not visible to the agent: ${reason}`);
    this.name = 'PathNotVisibleError';
  }
}

/** Checks paths for one block. */
export interface LeakageGuard {
  /** Visible files (workspace-relative `rel`, absolute real `path`). Hidden files are never in it. */
  readonly files: readonly VisibleFile[];
  /**
   * Resolves a requested path (workspace-relative like `data/x.csv`, or absolute: a visible file's
   * own path, or a path inside the workspace folder) to the real absolute path of a visible file.
   * @throws PathNotVisibleError for anything else.
   */
  resolve(requested: string): string;
  /** Same as {@link resolve} but returns false instead of throwing. */
  isVisible(requested: string): boolean;
  /**
   * Lists visible entries directly under a workspace-relative folder (`''` = top).
   * @returns names, folders with a trailing `/`, sorted. @throws PathNotVisibleError for `..` or absolute paths.
   */
  list(dir: string): string[];
}

function real(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

/**
 * All visible files of a block: its data and docs, then {@link otherVisibleFiles}.
 * @param block the block. @returns the files, data first.
 */
export function visibleFiles(block: Block): VisibleFile[] {
  return [...block.visible.data, ...block.visible.docs, ...otherVisibleFiles(block)];
}

const isFileResource = (v: unknown): v is { path: string; rel: string; size?: number } =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as { path?: unknown }).path === 'string' &&
  typeof (v as { rel?: unknown }).rel === 'string';

/**
 * The visible files a benchmark declares beside `data` and `docs` (issue 40: generic code names no benchmark's
 * resource): every further member of the block's `visible` that is a file (`{ path, rel }`, e.g. DDR's database) or a
 * list of files, in declaration order. The workspace holds them, the guard lists them.
 * @param block the block. @returns the files (`size` 0 when the resource gives none).
 */
export function otherVisibleFiles(block: Block): VisibleFile[] {
  const out: VisibleFile[] = [];
  for (const [key, v] of Object.entries(block.visible)) {
    if (key === 'data' || key === 'docs' || key === 'missing') continue;
    for (const f of Array.isArray(v) ? v : [v]) {
      if (isFileResource(f)) out.push({ path: f.path, rel: f.rel, size: typeof f.size === 'number' ? f.size : 0 });
    }
  }
  return out;
}

/** Normalises a workspace-relative request; throws for `..`, NUL, backslash traversal. */
function normaliseRel(requested: string): string {
  if (requested.includes('\0')) throw new PathNotVisibleError(requested, 'NUL byte in path');
  const p = requested.replace(/\\/g, '/');
  const parts = p.split('/').filter((s) => s !== '' && s !== '.');
  if (parts.includes('..')) throw new PathNotVisibleError(requested, "'..' is not allowed");
  return parts.join('/');
}

/**
 * Builds the guard for a block.
 * @param block the block; its `visible` lists what may be read, `hidden.files` what never may.
 * @param opts `workspaceDir`: the task workspace; absolute paths inside it are accepted and mapped to
 *   their workspace-relative name (after symlink resolution they must still be a visible file).
 * @returns a {@link LeakageGuard}. Visible entries whose real path is a hidden file are dropped.
 */
export function createGuard(block: Block, opts: { workspaceDir?: string } = {}): LeakageGuard {
  const hiddenReal = new Set<string>();
  for (const h of block.hidden.files) {
    hiddenReal.add(resolve(h));
    const r = real(h);
    if (r) hiddenReal.add(r);
  }

  const byRel = new Map<string, VisibleFile>();
  const realToRel = new Map<string, string>();
  for (const f of visibleFiles(block)) {
    const r = real(f.path) ?? resolve(f.path);
    if (hiddenReal.has(r) || hiddenReal.has(resolve(f.path))) continue;
    const rel = normaliseRel(f.rel);
    byRel.set(rel, { ...f, rel });
    realToRel.set(r, rel);
    realToRel.set(resolve(f.path), rel);
  }
  const files = [...byRel.values()];
  const ws = opts.workspaceDir ? resolve(opts.workspaceDir) : undefined;
  const wsReal = ws ? (real(ws) ?? ws) : undefined;

  const check = (requested: string): string => {
    if (typeof requested !== 'string' || requested.trim() === '') {
      throw new PathNotVisibleError(String(requested), 'empty path');
    }
    let rel: string | undefined;
    if (isAbsolute(requested)) {
      if (requested.includes('\0')) throw new PathNotVisibleError(requested, 'NUL byte in path');
      if (requested.split(/[\\/]/).includes('..')) throw new PathNotVisibleError(requested, "'..' is not allowed");
      const abs = resolve(requested);
      const inWs = (root: string | undefined) => root !== undefined && (abs === root || abs.startsWith(root + sep));
      if (inWs(ws) || inWs(wsReal)) rel = normaliseRel(relative(inWs(ws) ? ws! : wsReal!, abs));
      else {
        const r = real(abs) ?? abs;
        if (hiddenReal.has(r) || hiddenReal.has(abs)) throw new PathNotVisibleError(requested, 'hidden resource');
        rel = realToRel.get(abs) ?? realToRel.get(r);
        if (rel === undefined) throw new PathNotVisibleError(requested, 'outside the visible files');
      }
    } else rel = normaliseRel(requested);
    const f = byRel.get(rel);
    if (!f) throw new PathNotVisibleError(requested, 'not a visible file');
    const target = real(f.path);
    if (!target) throw new PathNotVisibleError(requested, 'file is missing on disk');
    if (hiddenReal.has(target)) throw new PathNotVisibleError(requested, 'resolves to a hidden resource');
    if (realToRel.get(target) !== rel) {
      throw new PathNotVisibleError(requested, 'symlink leads outside the visible files');
    }
    // A workspace path must itself resolve to the same real file (no swapped symlink).
    if (isAbsolute(requested)) {
      const r = real(resolve(requested));
      if (r && r !== target) throw new PathNotVisibleError(requested, 'symlink leads outside the visible files');
    }
    return target;
  };

  return {
    files,
    resolve: check,
    isVisible(requested) {
      try {
        check(requested);
        return true;
      } catch {
        return false;
      }
    },
    list(dir) {
      if (isAbsolute(dir)) throw new PathNotVisibleError(dir, 'list takes a workspace-relative folder');
      const d = normaliseRel(dir);
      const prefix = d === '' ? '' : `${d}/`;
      const names = new Set<string>();
      for (const rel of byRel.keys()) {
        if (!rel.startsWith(prefix)) continue;
        const rest = rel.slice(prefix.length);
        const i = rest.indexOf('/');
        names.add(i < 0 ? rest : `${rest.slice(0, i)}/`);
      }
      if (names.size === 0 && d !== '') throw new PathNotVisibleError(dir, 'not a visible folder');
      return [...names].sort();
    },
  };
}
