import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildRunNotebook, toLines } from '../../../../src/core/agent/notebook.ts';
import type { KernelCellRecord } from '../../../../src/core/agent/types.ts';

const cell = (seq: number, patch: Partial<KernelCellRecord>): KernelCellRecord => ({
  runId: 'r1',
  stepIndex: seq * 2,
  seq,
  code: 'x = 1\nx',
  status: 'ok',
  stdout: '',
  stderr: '',
  result: null,
  error: null,
  tables: [],
  figures: [],
  durationMs: 5,
  replay: false,
  ...patch,
});

describe('core/agent/notebook', () => {
  it('keeps newlines when splitting into nbformat lines', () => {
    assert.deepEqual(toLines('a\nb\n'), ['a\n', 'b\n']);
    assert.deepEqual(toLines('a'), ['a']);
    assert.deepEqual(toLines(''), []);
  });

  it('renders streams, results, tables, figures and errors as nbformat outputs', () => {
    const nb = buildRunNotebook(
      { id: 'r1', blockId: 'NHANES-db508', suite: 'longda', model: 'm', agent: 'llm' },
      [
        cell(0, { stdout: 'hello\n', result: '1' }),
        cell(1, {
          result: '   a\n0  1',
          tables: [
            {
              html: '<table><tr><td>1</td></tr></table>',
              text: '   a\n0  1',
              data: { columns: ['a'], index: ['0'], rows: [['1']], shape: [1, 1], rowGap: null, colGap: null },
            },
          ],
        }),
        cell(2, { figures: ['iVBORw0KGgo='] }),
        cell(3, {
          status: 'error',
          error: { ename: 'KeyError', evalue: "'BMXBMI'", traceback: ['Traceback...', "KeyError: 'BMXBMI'"] },
        }),
        cell(4, { status: 'timeout', stderr: 'cell exceeded 60 s\n' }),
      ],
      (c) => (c.seq === 4 ? 'analyst' : 'agent'),
    );
    assert.equal(nb.nbformat, 4);
    assert.equal(nb.cells.length, 6);
    const [, c0, c1, c2, c3, c4] = nb.cells;
    assert.deepEqual(
      c0?.outputs?.map((o) => o.output_type),
      ['stream', 'execute_result'],
    );
    assert.equal(c0?.execution_count, 1);
    // Issue 38: a table is Markdown built from its values, never the agent's HTML.
    assert.equal(c1?.outputs?.[0]?.data?.['text/html'], undefined);
    assert.deepEqual(
      c1?.outputs?.[0]?.data?.['text/markdown'],
      toLines('|  | a |\n| --- | --- |\n| **0** | 1 |\n\n1 rows × 1 columns'),
    );
    assert.equal(c2?.outputs?.[0]?.data?.['image/png'], 'iVBORw0KGgo=');
    assert.equal(c3?.outputs?.[0]?.ename, 'KeyError');
    assert.equal(c4?.outputs?.at(-1)?.ename, 'TimeoutError');
    assert.equal(c4?.metadata.loupe?.author, 'analyst');
    assert.equal(c0?.metadata.loupe?.step, 0);
    // Valid JSON round trip.
    assert.deepEqual(JSON.parse(JSON.stringify(nb)), nb);
  });
});
