/** Keyboard navigation of the model × question matrix (issue 43): arrow keys across dots and cells, Enter opens. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { navigateMatrix } from '../../../../webview/shared/matrix-nav.ts';

// rows × columns, each the number of repeats; row 1 has nothing in column 1
const dots = [
  [3, 2],
  [2, 0],
  [1, 3],
];

describe('matrix keyboard navigation', () => {
  it('starts at the first dot, moves dot by dot across cells, Enter opens the dot under the cursor', () => {
    assert.deepEqual(navigateMatrix('ArrowRight', null, dots), { kind: 'move', to: { row: 0, col: 0, dot: 0 } });
    assert.deepEqual(navigateMatrix('Enter', null, dots), { kind: 'none' });
    assert.deepEqual(navigateMatrix('ArrowRight', { row: 0, col: 0, dot: 2 }, dots), {
      kind: 'move',
      to: { row: 0, col: 1, dot: 0 },
    });
    assert.deepEqual(navigateMatrix('ArrowLeft', { row: 0, col: 1, dot: 0 }, dots), {
      kind: 'move',
      to: { row: 0, col: 0, dot: 2 },
    });
    assert.deepEqual(navigateMatrix('ArrowRight', { row: 0, col: 1, dot: 1 }, dots), { kind: 'none' });
    assert.deepEqual(navigateMatrix('Enter', { row: 2, col: 1, dot: 2 }, dots), {
      kind: 'open',
      at: { row: 2, col: 1, dot: 2 },
    });
  });
  it('up/down keep the column and the nearest repeat, stepping to another column where a cell is empty', () => {
    assert.deepEqual(navigateMatrix('ArrowDown', { row: 0, col: 0, dot: 2 }, dots), {
      kind: 'move',
      to: { row: 1, col: 0, dot: 1 },
    });
    assert.deepEqual(navigateMatrix('ArrowDown', { row: 0, col: 1, dot: 1 }, dots), {
      kind: 'move',
      to: { row: 1, col: 0, dot: 0 },
    });
    assert.deepEqual(navigateMatrix('ArrowUp', { row: 0, col: 0, dot: 0 }, dots), { kind: 'none' });
    assert.deepEqual(navigateMatrix('ArrowDown', { row: 2, col: 0, dot: 0 }, dots), { kind: 'none' });
    assert.deepEqual(navigateMatrix('End', { row: 2, col: 0, dot: 0 }, dots), {
      kind: 'move',
      to: { row: 2, col: 1, dot: 2 },
    });
    assert.deepEqual(navigateMatrix('PageDown', { row: 0, col: 0, dot: 0 }, dots), {
      kind: 'move',
      to: { row: 2, col: 0, dot: 0 },
    });
    assert.deepEqual(navigateMatrix('ArrowDown', null, []), { kind: 'none' });
  });
});
