import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileSha256, kernelPlacement, prepareWorkspace, workspaceBlock } from '../../../../src/core/runs/runner.ts';
import { PythonKernel, findBubblewrap } from '../../../../src/core/kernel/python-kernel.ts';
import type { Block, VisibleFile } from '../../../../src/core/suites/types.ts';

function blockWith(data: VisibleFile[], docs: VisibleFile[]): Block {
  return {
    id: 'b',
    suite: 'longda',
    suiteId: 's',
    title: 't',
    items: [],
    runnable: true,
    problems: [],
    visible: { data, docs, missing: [] },
    hidden: { files: [] },
  };
}

function setup(): { src: string; out: string; vf: (rel: string, body?: string) => VisibleFile } {
  const src = mkdtempSync(join(tmpdir(), 'loupe-ws-src-'));
  const out = mkdtempSync(join(tmpdir(), 'loupe-ws-run-'));
  const vf = (rel: string, body = rel) => {
    const p = join(src, rel);
    mkdirSync(join(p, '..'), { recursive: true });
    writeFileSync(p, body);
    return { path: p, rel, size: body.length };
  };
  return { src, out, vf };
}

test('prepareWorkspace: a fully visible folder is linked whole; a folder with a hidden file is linked file by file', () => {
  const { src, out, vf } = setup();
  try {
    const data = [vf('data/a/x.csv'), vf('data/b.csv')];
    const docs = [vf('docs/readme.txt')];
    writeFileSync(join(src, 'docs', 'answers.csv'), 'SECRET'); // hidden file next to a visible doc
    const { workspace, readOnlyPaths } = prepareWorkspace(out, blockWith(data, docs), { links: true });
    assert.ok(lstatSync(join(workspace, 'data')).isSymbolicLink());
    assert.equal(readFileSync(join(workspace, 'data', 'a', 'x.csv'), 'utf8'), 'data/a/x.csv');
    assert.ok(!lstatSync(join(workspace, 'docs')).isSymbolicLink());
    assert.ok(lstatSync(join(workspace, 'docs', 'readme.txt')).isSymbolicLink());
    assert.equal(existsSync(join(workspace, 'docs', 'answers.csv')), false);
    assert.deepEqual(readOnlyPaths.sort(), [join(src, 'data'), join(src, 'docs', 'readme.txt')].sort());
    // idempotent (resume calls it again)
    assert.deepEqual(
      prepareWorkspace(out, blockWith(data, docs), { links: true }).readOnlyPaths.sort(),
      readOnlyPaths.sort(),
    );
  } finally {
    rmSync(src, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  }
});

test('prepareWorkspace (sandboxed layout): mount points, no links; the sandbox shows data/ as a real read-only folder os.walk finds', async () => {
  const { src, out, vf } = setup();
  try {
    const data = [vf('data/a/x.csv'), vf('data/b.csv')];
    const docs = [vf('docs/readme.txt')];
    writeFileSync(join(src, 'docs', 'answers.csv'), 'SECRET');
    const place = kernelPlacement(out, blockWith(data, docs), 'bubblewrap');
    const ws = place.cwd;
    assert.ok(lstatSync(join(ws, 'data')).isDirectory());
    assert.ok(lstatSync(join(ws, 'docs', 'readme.txt')).isFile());
    assert.equal(readFileSync(join(ws, 'docs', 'readme.txt'), 'utf8'), '', 'host side holds an empty mount point');
    assert.deepEqual(place.writablePaths, [ws], 'only the workspace is writable, not the run folder');
    assert.deepEqual(place.readOnlyPaths, []);
    if (!findBubblewrap()) return;
    const k = await PythonKernel.start({ ...place, sandbox: 'bubblewrap' });
    try {
      const r = await k.execute(
        "import os\nprint(sorted(os.path.join(d, f) for d, _, fs in os.walk('.') for f in fs))\nprint(open('docs/readme.txt').read())\ntry:\n    open('data/b.csv', 'w').write('x')\nexcept OSError as e:\n    print('ro', e.errno)\ntry:\n    open('../planted.txt', 'w').write('x')\nexcept OSError as e:\n    print('outside', e.errno)",
      );
      // The run folder above the workspace is not mounted: a write there lands in the sandbox's own /tmp at most, never on the host.
      assert.match(r.stdout, /'\.\/data\/a\/x\.csv', '\.\/data\/b\.csv', '\.\/docs\/readme\.txt'/);
      assert.match(r.stdout, /docs\/readme\.txt\n/);
      assert.match(r.stdout, /ro 30/);
      assert.equal(existsSync(join(out, 'planted.txt')), false);
      assert.ok(!r.stdout.includes('answers.csv'));
    } finally {
      await k.close();
    }
  } finally {
    rmSync(src, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  }
});

test('prepareWorkspace: refuses paths escaping the workspace; fileSha256 hashes content', async () => {
  const { src, out, vf } = setup();
  try {
    const f = vf('data/x.csv', 'abc');
    assert.throws(
      () => prepareWorkspace(out, blockWith([{ ...f, rel: '../../etc/x.csv' }], [])),
      /escapes the workspace/,
    );
    assert.equal(await fileSha256(f.path), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  } finally {
    rmSync(src, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  }
});

test('workspaceBlock: AnalystBench "instruction only" puts no source file in the workspace; other settings keep them', () => {
  const { src, out, vf } = setup();
  try {
    const block: Block = { ...blockWith([vf('data/DEMO_L.xpt')], [vf('docs/DEMO_L.pdf')]), suite: 'analystbench' };
    const bare = prepareWorkspace(join(out, 'instruction'), workspaceBlock(block, { input: 'instruction' }));
    assert.equal(existsSync(join(bare.workspace, 'data')), false);
    assert.equal(existsSync(join(bare.workspace, 'docs')), false);
    assert.deepEqual(bare.readOnlyPaths, []);
    const full = prepareWorkspace(join(out, 'sources'), workspaceBlock(block, { input: 'sources' }), { links: true });
    assert.ok(existsSync(join(full.workspace, 'data', 'DEMO_L.xpt')));
    assert.ok(existsSync(join(full.workspace, 'docs', 'DEMO_L.pdf')));
    // Other suites are never stripped.
    const longda = { ...block, suite: 'longda' } as Block;
    assert.equal(workspaceBlock(longda, { input: 'instruction' }), longda);
  } finally {
    rmSync(src, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  }
});
