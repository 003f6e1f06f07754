/**
 * Kernel preload (issue 23): modules named in preloadModules are imported by the driver after it is ready, before
 * the first cell, outside the allowlist check; a module that cannot be imported is skipped; nothing is bound in the
 * cells' namespace. The runner preloads pandas only where agent code may import it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PythonKernel } from '../../../../src/core/kernel/index.ts';
import { findPython } from '../../../../src/core/env/doctor.ts';
import { kernelPreload } from '../../../../src/core/runs/runner.ts';

test('preloaded modules are in sys.modules before the first cell; a missing one is skipped; names stay unbound', async () => {
  const python = (await findPython()).path;
  const dir = mkdtempSync(join(tmpdir(), 'loupe-preload-'));
  const probe = "import sys\nprint('statistics' in sys.modules, 'fractions' in sys.modules, 'statistics' in globals())";
  try {
    const plain = await PythonKernel.start({
      python,
      cwd: dir,
      sandbox: 'off',
      readOnlyPaths: [],
      writablePaths: [],
      importAllowlist: ['sys'],
    });
    try {
      assert.equal(
        (await plain.execute(probe)).stdout.trim(),
        'False False False',
        'without preload the modules are not loaded',
      );
    } finally {
      await plain.close();
    }
    const k = await PythonKernel.start({
      python,
      cwd: dir,
      sandbox: 'off',
      readOnlyPaths: [],
      writablePaths: [],
      importAllowlist: ['sys'],
      preloadModules: ['statistics', 'no_such_module_loupe', 'fractions'],
    });
    try {
      const r = await k.execute(probe);
      assert.equal(r.status, 'ok', JSON.stringify(r.error));
      assert.equal(r.stdout.trim(), 'True True False');
      assert.equal((await k.execute('import statistics')).status, 'error', 'the allowlist still applies to cells');
    } finally {
      await k.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('kernelPreload: pandas where the allowlist lets agent code import it', () => {
  assert.deepEqual(kernelPreload(null), ['pandas']);
  assert.deepEqual(kernelPreload(['numpy.*', 'pandas.*']), ['pandas']);
  assert.deepEqual(kernelPreload(['pandas']), ['pandas']);
  assert.deepEqual(kernelPreload(['numpy.*', 'json']), []);
});
