/** Issue 22: an accepted BLADE submission's observation never reads "Model result (first lines): None". */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { modelResultText } from '../../../../../src/core/benchmarks/blade/toolset.ts';

describe('BLADE model result text (issue 22)', () => {
  it('a returned result: its first 25 lines', () => {
    const lines = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`);
    const t = modelResultText({ model_repr: lines.join('\n') });
    assert.match(t, /^Model result \(first lines\):\nline 1\n/);
    assert.ok(t.includes('line 25') && !t.includes('line 26'));
  });
  it('model(df) returned None: what it printed, or a plain note', () => {
    assert.match(
      modelResultText({ model_repr: 'OLS Regression Results\n====', model_returned_none: true }),
      /^model\(df\) returned nothing; what it printed \(first lines\):\nOLS Regression Results/,
    );
    const none = modelResultText({ model_repr: '', model_returned_none: true });
    assert.match(none, /returned nothing and printed nothing/);
    assert.doesNotMatch(none, /None/);
  });
});
