/**
 * Issue 44, the escape hatch: a manifest's Python scorer module runs in the same bubblewrap sandbox as agent code —
 * no network (a loopback server on the host is unreachable), its folder read-only, a time limit — and its verdicts
 * become item results scored and aggregated like the built-in scorers'.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { manifestBenchmarkAt } from '../../../../../src/core/benchmarks/manifest/define.ts';
import { scoreWithPython } from '../../../../../src/core/benchmarks/manifest/python-scorer.ts';
import { LoupeInputError } from '../../../../../src/core/util/errors.ts';

const MANIFEST = `kind: py-scored
title: Py scored
items: { file: q.jsonl, id: id, instruction: question }
gold: { file: q.jsonl, id: id, answer: answer }
scoring:
  scorer: python
  module: scorer.py
  timeoutSeconds: 20
  aggregations:
    - { metric: accuracy, kind: per-item }
nativeOutputs: { id: id, response: response }
`;

describe('python scorer module in the sandbox', () => {
  const d = mkdtempSync(join(tmpdir(), 'loupe-pyscorer-'));
  const server = createServer((s) => s.end('reached'));
  after(() => {
    server.close();
    rmSync(d, { recursive: true, force: true });
  });

  it('scores, cannot reach a host loopback server, cannot write its folder', async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    mkdirSync(join(d, 'b'));
    writeFileSync(join(d, 'b', 'loupe-benchmark.yaml'), MANIFEST);
    writeFileSync(
      join(d, 'b', 'scorer.py'),
      `import socket
def score(items):
    try:
        socket.create_connection(("127.0.0.1", ${port}), timeout=2).close()
        escaped = "network"
    except OSError:
        escaped = None
    try:
        open(__file__ + ".written", "w").write("x")
        escaped = escaped or "write"
    except OSError:
        pass
    if escaped:
        raise SystemExit("escaped: " + escaped)
    return [{"answer": i["response"].strip().lower() == i["gold"][0][1].lower()} for i in items]
`,
    );
    writeFileSync(
      join(d, 'b', 'q.jsonl'),
      '{"id": 1, "question": "Colour of the sky?", "answer": "Blue"}\n{"id": 2, "question": "Colour of grass?", "answer": "green"}\n{"id": 3, "question": "Colour of snow?", "answer": "white"}\n',
    );
    writeFileSync(
      join(d, 'responses.jsonl'),
      '{"id": 1, "response": " blue "}\n{"id": 2, "response": "red"}\n{"id": 3, "response": ""}\n',
    );
    const def = manifestBenchmarkAt(join(d, 'b'));
    const r = await def.importNativeOutputs!.score({
      paths: [join(d, 'responses.jsonl')],
      root: join(d, 'b'),
      inputs: {},
      judge: () => {
        throw new Error('no judge');
      },
      raw: {},
      preset: 'official',
    });
    const j = r.json as {
      summary: { accuracy: number };
      counted: number;
      items: Array<{ id: string; correct: boolean; answered: boolean }>;
    };
    assert.deepEqual(
      j.items.map((i) => [i.id, i.answered, i.correct]),
      [
        ['1', true, true],
        ['2', true, false],
        ['3', false, false],
      ],
    );
    assert.equal(j.counted, 3); // no denominator in the manifest: all questions
    assert.equal(j.summary.accuracy, 1 / 3);
    assert.equal(existsSync(join(d, 'b', 'scorer.py.written')), false);
  });

  it('a module past its time limit is stopped and named', async () => {
    writeFileSync(join(d, 'slow.py'), 'def score(items):\n    while True:\n        pass\n');
    await assert.rejects(
      scoreWithPython(
        join(d, 'slow.py'),
        [{ id: '1', response: 'x', gold: { answers: [['answer', 'x']] }, metadata: {} }],
        { timeoutSeconds: 2 },
      ),
      (e: unknown) =>
        e instanceof LoupeInputError && e.subject === join(d, 'slow.py') && /time limit \(2 s\)/.test(e.message),
    );
  });

  it('a module returning the wrong shape is named', async () => {
    writeFileSync(join(d, 'bad.py'), 'def score(items):\n    return [1]\n');
    await assert.rejects(
      scoreWithPython(
        join(d, 'bad.py'),
        [{ id: '1', response: 'x', gold: { answers: [['answer', 'x']] }, metadata: {} }],
        { timeoutSeconds: 20 },
      ),
      (e: unknown) => e instanceof LoupeInputError && /must be a bool or \{name: bool\}/.test(e.message),
    );
  });
});
