/**
 * Issue 38: an agent cell's outputs reach the run notebook as data, never as live markup. A DataFrame whose
 * `to_html` the agent patched to return `<script>` / `<img onerror>` (and whose values and labels hold markup) is run
 * in the real kernel; its outputs are mapped as the extension maps them for VS Code (`kernelCellOutputs` →
 * `notebookOutputItems`, which `toVscodeOutputs` only wraps). No item may have a mime type VS Code renders as live
 * HTML or code, and no Markdown item may hold `<script`, `onerror=` or `javascript:`. Outputs recorded before the
 * change (`text/html` in the store or in an existing .ipynb, SVG, JavaScript, LaTeX) are made safe on read.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PythonKernel } from '../../../src/core/kernel/index.ts';
import { findPython } from '../../../src/core/env/doctor.ts';
import * as nbmod from '../../../src/core/agent/notebook.ts';
import type { NotebookOutput } from '../../../src/core/agent/notebook.ts';
import type { KernelCellRecord } from '../../../src/core/agent/types.ts';

/** Mime types VS Code's notebook renders as live markup or code (built-in renderers and common extensions). */
const LIVE =
  /^(text\/html|image\/svg\+xml|application\/javascript|text\/javascript|application\/x-javascript|text\/latex|application\/xhtml\+xml|application\/vnd\.jupyter\.widget-view\+json|application\/vnd\..*\+(html|javascript)|text\/vnd\..*)$/i;
const HOSTILE_MD = /<script|<img|<iframe|<style|onerror\s*=|onload\s*=|javascript:|\]\(/i;

const HOSTILE_CELL = `import pandas as pd
df = pd.DataFrame({'a<script>alert(1)</script>': [1, 2], 'b': ['<img src=x onerror=alert(1)>', '[x](javascript:alert(1))']}, index=['<b>r0</b>', 'r|1'])
pd.DataFrame.to_html = lambda self, *a, **k: '<script>alert(document.cookie)</script><img src=x onerror="alert(2)">'
df`;

function assertSafeBundle(data: Record<string, string | string[]> | undefined, where: string): void {
  for (const [mime, v] of Object.entries(data ?? {})) {
    assert.doesNotMatch(mime, LIVE, `${where}: live mime ${mime}`);
    const text = Array.isArray(v) ? v.join('') : v;
    if (mime === 'text/markdown') assert.doesNotMatch(text, HOSTILE_MD, `${where}: markdown ${JSON.stringify(text)}`);
  }
}

test(
  "a DataFrame with a patched to_html: the cell's notebook outputs carry no agent HTML (real kernel)",
  { timeout: 60_000 },
  async () => {
    const python = (await findPython()).path;
    const dir = mkdtempSync(join(tmpdir(), 'loupe-i38-nb-'));
    const k = await PythonKernel.start({ python, cwd: dir, sandbox: 'off', readOnlyPaths: [], writablePaths: [] });
    try {
      const r = await k.execute(HOSTILE_CELL);
      assert.equal(r.status, 'ok', JSON.stringify(r.error));
      assert.ok(r.tables?.[0], 'the DataFrame result is a table');
      assert.match(
        r.tables[0]!.html,
        /<script>alert\(document\.cookie\)/,
        "the agent's raw HTML is kept (evidence, stored)",
      );
      const cell: Pick<KernelCellRecord, 'stdout' | 'stderr' | 'result' | 'tables' | 'figures' | 'error' | 'status'> = {
        stdout: r.stdout,
        stderr: r.stderr,
        result: r.result ?? null,
        tables: r.tables,
        figures: [],
        error: null,
        status: r.status,
      };
      const outs = nbmod.kernelCellOutputs(cell, 1);
      const result = outs.find((o) => o.output_type === 'execute_result');
      assert.ok(result?.data, 'the result is shown');
      for (const o of outs) assertSafeBundle(o.data, 'kernelCellOutputs');
      const md = [result.data['text/markdown'] ?? []].flat().join('');
      assert.ok(md, 'the table is rendered as Markdown built from its values');
      // The values are there, as text: entities decode to the agent's strings.
      const decoded = md.replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)));
      assert.ok(
        decoded.includes('<img src=x onerror=alert(1)>') &&
          decoded.includes('a<script>alert(1)</script>') &&
          decoded.includes('r|1'),
        decoded,
      );
      assert.match(md, /^\| {2}\| a&#60;script/m, 'a header row');
      assert.match(md, /2 rows × 2 columns/);
      // As VS Code gets them (toVscodeOutputs wraps these items one to one).
      for (const o of outs) {
        for (const it of nbmod.notebookOutputItems(o)) {
          assert.doesNotMatch(it.mime, LIVE);
          if (it.mime === 'text/markdown') assert.doesNotMatch(it.text ?? '', HOSTILE_MD);
        }
      }
      assert.equal(nbmod.notebookOutputItems(result)[0]?.mime, 'text/markdown', 'VS Code shows the table first');
    } finally {
      await k.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('outputs recorded before issue 38 render without live HTML: stored text/html, and an old .ipynb with HTML, SVG, JS, LaTeX', () => {
  const stored = nbmod.kernelCellOutputs(
    {
      stdout: 'out \x1b]52;c;eA==\x07\n',
      stderr: '',
      result: '   a\n0  1',
      tables: [{ html: '<script>alert(1)</script>', text: '   a\n0  1' }],
      figures: [],
      error: null,
      status: 'ok',
    },
    1,
  );
  for (const o of stored) assertSafeBundle(o.data, 'stored cell');
  assert.equal(
    stored.find((o) => o.output_type === 'execute_result')?.data?.['text/plain']?.length,
    2,
    'the table as text',
  );
  assert.ok(!stored[0]!.text!.join('').includes('\x1b'), 'stream controls escaped');
  const old: NotebookOutput[] = [
    {
      output_type: 'execute_result',
      execution_count: 1,
      metadata: {},
      data: { 'text/html': ['<script>alert(1)</script>'], 'text/plain': ['   a'] },
    },
    {
      output_type: 'display_data',
      metadata: {},
      data: { 'image/svg+xml': '<svg onload="alert(1)"><script>alert(2)</script></svg>' },
    },
    {
      output_type: 'display_data',
      metadata: {},
      data: { 'application/javascript': 'alert(1)', 'text/latex': '$\\href{javascript:alert(1)}{x}$' },
    },
    {
      output_type: 'display_data',
      metadata: {},
      data: { 'text/markdown': '<img src=x onerror=alert(1)> [a](javascript:alert(1))', 'image/png': 'iVBORw0KGgo=' },
    },
    { output_type: 'display_data', metadata: {}, data: { 'TEXT/HTML': '<b>x</b>' } },
  ];
  const nb = { cells: [{ outputs: structuredClone(old) }, { cell_type: 'markdown' }] };
  assert.equal(nbmod.sanitiseNotebook(nb), 5);
  for (const o of nb.cells[0]!.outputs!) assertSafeBundle(o.data, 'old ipynb');
  for (const o of old) {
    const items = nbmod.notebookOutputItems(o);
    assert.ok(items.length > 0, 'nothing disappears: unsafe outputs are shown as text');
    for (const it of items) {
      assert.doesNotMatch(it.mime, LIVE);
      if (it.mime === 'text/markdown') assert.doesNotMatch(it.text ?? '', HOSTILE_MD);
    }
  }
  const svg = nbmod.notebookOutputItems(old[1]!);
  assert.deepEqual(
    svg.map((i) => i.mime),
    ['text/plain'],
  );
  assert.match(svg[0]!.text!, /^\[image\/svg\+xml output, shown as text\]\n<svg onload/);
  assert.deepEqual(
    nbmod.notebookOutputItems(old[3]!).map((i) => i.mime),
    ['image/png', 'text/plain'],
    'unsafe markdown becomes text, the PNG stays',
  );
  assert.equal(nbmod.sanitiseNotebook(nb), 0, 'idempotent');
});

test('the notebook header escapes a hostile stored agent name, model and block', () => {
  const nb = nbmod.buildRunNotebook(
    {
      id: 'r1',
      blockId: 'b<script>x</script>',
      suite: 'longda',
      model: 'm`<img src=x onerror=alert(1)>`',
      agent: 'mcp:`<img src=x onerror=alert(1)>`[c](javascript:alert(1))/1',
    },
    [],
  );
  const src = nb.cells[0]!.source.join('');
  assert.doesNotMatch(src, HOSTILE_MD);
  assert.ok(!src.includes('`<'), src);
});
