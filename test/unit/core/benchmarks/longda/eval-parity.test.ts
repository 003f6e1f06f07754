/**
 * Parity of Loupe's LongDA answer normalisation with Python: the same rules run in CPython with the
 * real `ast.literal_eval` (the piece LongTA delegates to Python) on a corpus of agent-style answers
 * and on every ground-truth answer of benchmark.csv. Sets, bytes and complex literals are left out on
 * purpose (Python orders sets by hash; LongTA never meets either).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { findPython } from '../../../../../src/core/env/doctor.ts';
import {
  loadLongdaGroundTruth,
  normalizeAnswerValue,
  scoreLongda,
  type LongdaValue,
} from '../../../../../src/core/benchmarks/longda/eval.ts';
import { sharedData } from '../../../../helpers/shared.ts';

const PY = String.raw`
import ast, json, re, sys
NUM = r'[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?'
def norm(v):
    if v is None: return None
    if isinstance(v, bool): return float(v)
    if isinstance(v, (int, float)): return float(v)
    if isinstance(v, dict): return {'__dict__': {str(k): norm(x) for k, x in v.items()}}
    if isinstance(v, (list, tuple)): return [norm(x) for x in v]
    if isinstance(v, str):
        s = v.strip()
        if not s: return None
        s = re.sub('[\u2212\u2013\u2014]', '-', s).replace('\u00b1', '+-').replace('+/-', '+-')
        m = re.match(r'^(.*?\S)\s*\+-\s*' + NUM + r'\s*%?\s*$', s, re.S)
        if m: s = m.group(1)
        s = s.replace('%', '')
        s = re.sub(r'(?<=\d),(?=\d{3}\b)', '', s, flags=re.A)
        try:
            return norm(ast.literal_eval(s))
        except Exception:
            pass
        kv = re.findall(r'([A-Za-z0-9_\-/\s]+?)\s*[:=]\s*(' + NUM + ')', s)
        if kv: return {'__dict__': {k.strip(): float(x) for k, x in kv}}
        nums = re.findall(NUM, s)
        if not nums: return None
        return float(nums[0]) if len(nums) == 1 else [float(x) for x in nums]
    return 'UNSUPPORTED'
def compare(a, g):
    # compute_row_metrics / _compare_values as spec section 2.4 describes them (tolerance max(0.05|g|, 1), partial lists)
    isnum = lambda x: isinstance(x, float) and x == x
    if a is None or g is None: return (0, 0.0)
    if isinstance(a, float) and isinstance(g, float):
        if not (isnum(a) and isnum(g)): return (0, 0.0)
        return (1, 1.0 if abs(a - g) <= max(0.05 * abs(g), 1.0) else 0.0)
    if isinstance(a, list) and isinstance(g, list):
        if len(a) != len(g): return (0, 0.0)
        hits = [1.0 if abs(x - y) <= max(0.05 * abs(y), 1.0) else 0.0 for x, y in zip(a, g) if isnum(x) and isnum(y)]
        if not hits: return (0, 0.0)
        return (1, sum(hits) / len(hits))
    return (0, 0.0)
data = json.load(sys.stdin)
if isinstance(data, dict):
    rows = [compare(norm(a), norm(g)) for a, g in zip(data['answers'], data['truth'])]
    print(json.dumps(rows))
else:
    print(json.dumps([norm(x) for x in data]))
`;

const CORPUS = [
  '40.3',
  '40.3%',
  ' 40.3 % ',
  '1,234',
  '1,234,567.5',
  '[1.0, 2.0]',
  '(1.0, 2.0)',
  '1.0, 2.0',
  '[12.5,100.0]',
  '[12.5, 100.0]',
  'men: 1.2, women: 3.4',
  'men=1.2; women=3.4',
  '45 +- 3',
  '45 ± 3',
  '45.2 ± 1.3%',
  '7 +/- 0.5',
  '−3.5',
  '–2',
  '3.1 trillion',
  'about 3 and 4',
  'NA.',
  '',
  '   ',
  'None',
  'True',
  "'42'",
  '"12.5%"',
  "['1.5', None]",
  '[[1, 2], 3]',
  "{'a': 1, 'b': [2, 3.5]}",
  '1e3',
  '-.5e1',
  '1_000',
  '0x10',
  '+5',
  '--5',
  '[1, 2,]',
  '[1 2]',
  '12.5 (95% CI 10.1–14.9)',
  'Approximately 11.3 percent',
  '[32.0, 12.8]',
  '["32.0", "12.8"]',
  '2021: 45.6',
  'ratio 3:1',
  '4287659722',
  '0.488',
  '.5',
  '5.',
  'nan',
  'inf',
  '[1, nan]',
  '012',
  '1 + 2',
  'abc',
  "r'1.5'",
  '"a" "b"',
  '[1.5, [2.5]]',
  '{"x": "1,234"}',
];

const norm = (v: LongdaValue): unknown => {
  if (v === null || typeof v === 'number') return v;
  if (Array.isArray(v)) return v.map(norm);
  return { __dict__: Object.fromEntries(Object.entries(v.entries).map(([k, x]) => [k, norm(x)])) };
};

async function python(inputs: unknown): Promise<unknown[]> {
  const py = await findPython();
  const r = spawnSync(py.path, ['-c', PY], { input: JSON.stringify(inputs), encoding: 'utf8', maxBuffer: 1 << 26 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as unknown[];
}

describe('eval/longda normalisation parity with CPython ast.literal_eval', () => {
  it('agrees on a corpus of agent-style answers', async () => {
    const want = await python(CORPUS);
    CORPUS.forEach((s, i) => assert.deepEqual(norm(normalizeAnswerValue(s)), want[i], `input ${JSON.stringify(s)}`));
  });
  it('agrees on every ground-truth answer of benchmark.csv', async () => {
    const gt = loadLongdaGroundTruth(sharedData('longda', 'benchmark', 'benchmark.csv'));
    const inputs = gt.map((q) => q.answerText);
    const want = await python(inputs);
    inputs.forEach((s, i) =>
      assert.deepEqual(norm(normalizeAnswerValue(s)), want[i], `${gt[i]!.longdaId}: ${JSON.stringify(s)}`),
    );
  });
});

describe('eval/longda row scoring parity with a Python transcription of metric.py', () => {
  it('gives the same coverage and match on a perturbed answer set for all 474 queries', async () => {
    const gt = loadLongdaGroundTruth(sharedData('longda', 'benchmark', 'benchmark.csv'));
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const bump = (x: number) => {
      const r = rnd();
      return r < 0.4 ? x : r < 0.7 ? x * 1.03 : r < 0.9 ? x * 1.12 + 0.5 : -x;
    };
    const answers = gt.map((q) => {
      const g = normalizeAnswerValue(q.answerText);
      const r = rnd();
      if (r < 0.08) return null;
      if (r < 0.14) return 'men: 1.0, women: 2.0';
      if (typeof g === 'number') return r < 0.5 ? `${bump(g).toFixed(2)}%` : String(bump(g));
      if (Array.isArray(g)) {
        const xs = (g as number[]).map(bump);
        if (r < 0.2) xs.pop();
        return r < 0.6 ? `[${xs.map((x) => x.toFixed(1)).join(', ')}]` : xs.map((x) => x.toFixed(3)).join(', ');
      }
      return 'NA.';
    });
    const want = (await python({ answers, truth: gt.map((q) => q.answerText) })) as Array<[number, number]>;
    const rows = scoreLongda(gt, Object.fromEntries(gt.map((q, i) => [q.longdaId, answers[i]]))).rows;
    rows.forEach((r, i) =>
      assert.deepEqual(
        [r.coverageComparable, r.matchPartial],
        want[i],
        `${r.qId}: ${answers[i]} vs ${gt[i]!.answerText}`,
      ),
    );
    const match = rows.reduce((s, r) => s + r.matchPartial, 0);
    assert.ok(match > 50 && match < 470, `a mixed answer set (match sum ${match})`);
  });
});
