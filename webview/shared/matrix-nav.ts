/**
 * Keyboard navigation of the model × question matrix (issue 43): the cursor is one dot (row, column, repeat).
 * ←/→ move dot by dot across the cells of a row (into the next / previous profile's cell, skipping empty cells), ↑/↓
 * move to the row above/below (same column, the nearest repeat that exists there), Home/End the first/last dot of the
 * row, PageUp/PageDown ten rows, Enter opens the dot. Pure so it is tested in Node.
 */

export interface MatrixCursor {
  row: number;
  col: number;
  dot: number;
}
export type MatrixNavAction =
  { kind: 'move'; to: MatrixCursor } | { kind: 'open'; at: MatrixCursor } | { kind: 'none' };

/**
 * What a key does. @param dots dots per cell: `dots[row][col]` is the number of repeats in that cell.
 * @param at the current cursor (null: none yet — any move goes to the first dot).
 */
export function navigateMatrix(
  key: string,
  at: MatrixCursor | null,
  dots: readonly (readonly number[])[],
  pageSize = 10,
): MatrixNavAction {
  const first = (row: number): MatrixCursor | null => {
    const c = dots[row]?.findIndex((n) => n > 0) ?? -1;
    return c < 0 ? null : { row, col: c, dot: 0 };
  };
  const last = (row: number): MatrixCursor | null => {
    const r = dots[row] ?? [];
    for (let c = r.length - 1; c >= 0; c--) if (r[c]! > 0) return { row, col: c, dot: r[c]! - 1 };
    return null;
  };
  const near = (row: number, col: number, dot: number): MatrixCursor | null => {
    const r = dots[row];
    if (!r) return null;
    if ((r[col] ?? 0) > 0) return { row, col, dot: Math.min(dot, r[col]! - 1) };
    for (let d = 1; d < r.length; d++) {
      for (const c of [col - d, col + d]) if ((r[c] ?? 0) > 0) return { row, col: c, dot: 0 };
    }
    return null;
  };
  const rowStep = (from: number, step: number): MatrixNavAction => {
    const start = Math.max(0, Math.min(dots.length - 1, from + step));
    if (start === from) return { kind: 'none' };
    for (let r = start; r >= 0 && r < dots.length; r += Math.sign(step)) {
      const to = near(r, at!.col, at!.dot);
      if (to) return { kind: 'move', to };
    }
    return { kind: 'none' };
  };
  if (!dots.length) return { kind: 'none' };
  if (!at) {
    if (
      key === 'Enter' ||
      !['ArrowDown', 'ArrowUp', 'ArrowLeft', 'ArrowRight', 'Home', 'End', 'PageDown', 'PageUp'].includes(key)
    ) {
      return { kind: 'none' };
    }
    for (let r = 0; r < dots.length; r++) {
      const f = first(r);
      if (f) return { kind: 'move', to: f };
    }
    return { kind: 'none' };
  }
  const row = dots[at.row] ?? [];
  switch (key) {
    case 'ArrowRight': {
      if (at.dot + 1 < (row[at.col] ?? 0)) return { kind: 'move', to: { ...at, dot: at.dot + 1 } };
      for (let c = at.col + 1; c < row.length; c++) {
        if (row[c]! > 0) return { kind: 'move', to: { row: at.row, col: c, dot: 0 } };
      }
      return { kind: 'none' };
    }
    case 'ArrowLeft': {
      if (at.dot > 0) return { kind: 'move', to: { ...at, dot: at.dot - 1 } };
      for (let c = at.col - 1; c >= 0; c--) {
        if (row[c]! > 0) return { kind: 'move', to: { row: at.row, col: c, dot: row[c]! - 1 } };
      }
      return { kind: 'none' };
    }
    case 'ArrowDown':
      return rowStep(at.row, 1);
    case 'ArrowUp':
      return at.row === 0 ? { kind: 'none' } : rowStep(at.row, -1);
    case 'PageDown':
      return rowStep(at.row, pageSize);
    case 'PageUp':
      return at.row === 0 ? { kind: 'none' } : rowStep(at.row, -pageSize);
    case 'Home': {
      const f = first(at.row);
      return f ? { kind: 'move', to: f } : { kind: 'none' };
    }
    case 'End': {
      const l = last(at.row);
      return l ? { kind: 'move', to: l } : { kind: 'none' };
    }
    case 'Enter':
      return (row[at.col] ?? 0) > at.dot ? { kind: 'open', at } : { kind: 'none' };
    default:
      return { kind: 'none' };
  }
}
