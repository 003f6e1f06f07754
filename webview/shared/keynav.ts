/**
 * Keyboard navigation over a list of results (↑/↓/Home/End/PageUp/PageDown move, Enter opens).
 * Pure so it is tested in Node (test/unit/webview/keynav.test.ts).
 */

export type NavAction = { kind: 'move'; index: number } | { kind: 'open'; index: number } | { kind: 'none' };

/** What a key does to a list of `count` items with `current` selected (-1 = none). */
export function navigate(key: string, current: number, count: number, pageSize = 10): NavAction {
  if (count <= 0) return { kind: 'none' };
  const clamp = (i: number) => Math.max(0, Math.min(count - 1, i));
  switch (key) {
    case 'ArrowDown':
      return { kind: 'move', index: current < 0 ? 0 : clamp(current + 1) };
    case 'ArrowUp':
      return { kind: 'move', index: current < 0 ? 0 : clamp(current - 1) };
    case 'Home':
      return { kind: 'move', index: 0 };
    case 'End':
      return { kind: 'move', index: count - 1 };
    case 'PageDown':
      return { kind: 'move', index: clamp((current < 0 ? 0 : current) + pageSize) };
    case 'PageUp':
      return { kind: 'move', index: clamp((current < 0 ? 0 : current) - pageSize) };
    case 'Enter':
      return current >= 0 && current < count ? { kind: 'open', index: current } : { kind: 'none' };
    default:
      return { kind: 'none' };
  }
}

/** Page number of a unit label such as "Page 12" (undefined for "Line n" / "Row n"). */
export function pageOfUnit(unit: string): number | undefined {
  const m = /^page\s+(\d+)$/i.exec(unit.trim());
  return m ? Number(m[1]) : undefined;
}

/** Formats a score for display: BM25 scores with 2 decimals, keyword hits (score = count) as integers. */
export function formatScore(score: number): string {
  if (!Number.isFinite(score)) return '—';
  return Number.isInteger(score) ? String(score) : score.toFixed(2);
}
