/**
 * What a folder tree really costs its file system, for the workspace quota. Counting the bytes of regular files only
 * (the quota before issue 37) let 20,000 directories plus 20,000 empty files with 250-character names take 86 MiB and
 * 60,000 inodes under a 50 MiB quota. Here every entry costs something: its allocated blocks, at least one block of the
 * file system per inode (an inode and its first block are spent even for an empty file), and the bytes of its name in
 * its directory. Directories count their own blocks (`st_blocks`: a directory of many long names grows).
 * Source: issue 37 "Kernel limits that hold for the kernel's whole life", case 3.
 */
import { lstatSync, readdirSync, statfsSync, type Dirent } from 'node:fs';
import { join } from 'node:path';

/** Usage of a tree, see {@link diskUsage}. */
export interface DiskUsage {
  /** Bytes charged: Σ over inodes of max(st_blocks × 512, block size) + Σ over entries of the name's UTF-8 bytes. */
  bytes: number;
  /** Inodes below the root (each counted once: hard links are not counted twice), the root excluded. */
  inodes: number;
  /** Directory entries seen (a hard-linked file has several). */
  entries: number;
  /** The walk stopped at `maxEntries`: `bytes` is a lower bound. */
  truncated: boolean;
}

/**
 * Measures a folder tree without following links (a link costs its own inode, its target is not entered) and without
 * leaving the file system of `root` (a mount point inside it, e.g. the sandbox's read-only data, is not entered).
 * @param root absolute folder (the run's workspace).
 * @param maxEntries stop after this many entries (default 2,000,000): a tree planted to stall the host is cut, and
 *   what was counted so far is already a lower bound of the cost.
 * @returns bytes (see {@link DiskUsage.bytes}), inodes, entries; all zero when `root` cannot be read.
 *   Never throws: entries removed meanwhile are skipped.
 */
export function diskUsage(root: string, maxEntries = 2_000_000): DiskUsage {
  let block: number;
  let rootDev: number;
  try {
    block = Math.max(512, statfsSync(root).bsize);
    rootDev = lstatSync(root).dev;
  } catch {
    return { bytes: 0, inodes: 0, entries: 0, truncated: false };
  }
  const seen = new Set<number>();
  let bytes = 0;
  let entries = 0;
  const stack = [root];
  while (stack.length) {
    const dir = stack.pop()!;
    let list: Dirent[];
    try {
      list = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of list) {
      if (entries >= maxEntries) return { bytes, inodes: seen.size, entries, truncated: true };
      entries++;
      bytes += Buffer.byteLength(e.name);
      const p = join(dir, e.name);
      let st;
      try {
        st = lstatSync(p);
      } catch {
        continue;
      }
      if (st.dev !== rootDev) continue;
      if (seen.has(st.ino)) continue;
      seen.add(st.ino);
      bytes += Math.max(st.blocks * 512, block);
      if (st.isDirectory()) stack.push(p);
    }
  }
  return { bytes, inodes: seen.size, entries, truncated: false };
}
