import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatScore, navigate, pageOfUnit } from '../../../webview/shared/keynav.ts';

describe('webview keyboard navigation', () => {
  it('moves within bounds and opens the selected item on Enter', () => {
    assert.deepEqual(navigate('ArrowDown', -1, 3), { kind: 'move', index: 0 });
    assert.deepEqual(navigate('ArrowDown', 2, 3), { kind: 'move', index: 2 });
    assert.deepEqual(navigate('ArrowUp', 0, 3), { kind: 'move', index: 0 });
    assert.deepEqual(navigate('End', 0, 3), { kind: 'move', index: 2 });
    assert.deepEqual(navigate('Home', 2, 3), { kind: 'move', index: 0 });
    assert.deepEqual(navigate('PageDown', 1, 30, 10), { kind: 'move', index: 11 });
    assert.deepEqual(navigate('PageUp', 5, 30, 10), { kind: 'move', index: 0 });
    assert.deepEqual(navigate('Enter', 1, 3), { kind: 'open', index: 1 });
    assert.deepEqual(navigate('Enter', -1, 3), { kind: 'none' });
    assert.deepEqual(navigate('a', 1, 3), { kind: 'none' });
    assert.deepEqual(navigate('ArrowDown', -1, 0), { kind: 'none' });
  });

  it('reads page numbers from unit labels', () => {
    assert.equal(pageOfUnit('Page 12'), 12);
    assert.equal(pageOfUnit('Line 3'), undefined);
  });

  it('formats scores', () => {
    assert.equal(formatScore(1), '1');
    assert.equal(formatScore(12.3456), '12.35');
    assert.equal(formatScore(Number.NaN), '—');
  });
});
