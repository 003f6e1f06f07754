/** "Did you mean" for the CLI: nearest names by edit distance (fastest-levenshtein). */
import { distance } from 'fastest-levenshtein';

/**
 * The candidates closest to `word` (case-insensitive), best first.
 * @param max at most this many; only candidates within a distance of about a third of the word's length
 *   (at least 2), or that contain the word, are offered.
 */
export function nearest(word: string, candidates: readonly string[], max = 3): string[] {
  const w = word.toLowerCase();
  const limit = Math.max(2, Math.ceil(w.length / 3));
  return candidates
    .map((c) => ({ c, d: c.toLowerCase().includes(w) && w.length >= 3 ? 0.5 : distance(w, c.toLowerCase()) }))
    .filter((x) => x.d <= limit)
    .sort((a, b) => a.d - b.d || a.c.localeCompare(b.c))
    .slice(0, max)
    .map((x) => x.c);
}

/** ` Did you mean 'a' or 'b'?` or an empty string. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const n = nearest(word, candidates);
  if (!n.length) return '';
  return ` Did you mean ${n.map((x) => `'${x}'`).join(n.length === 2 ? ' or ' : ', ')}?`;
}
