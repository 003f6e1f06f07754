// Builds the extension host bundle, the CLI and the webview bundles.
//   node esbuild.js               one development build
//   node esbuild.js --production  minified, no sourcemaps
//   node esbuild.js --watch       rebuild on change (problem-matcher friendly output)
const esbuild = require('esbuild');
const fs = require('node:fs');
const path = require('node:path');

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

/** Prints the lines the `$esbuild-watch` problem matcher looks for. */
const problemMatcher = {
  name: 'problem-matcher',
  setup(build) {
    build.onStart(() => console.log('[watch] build started'));
    build.onEnd((result) => {
      for (const { text, location } of result.errors) {
        console.error(`✘ [ERROR] ${text}`);
        if (location) console.error(`    ${location.file}:${location.line}:${location.column}:`);
      }
      console.log('[watch] build finished');
    });
  },
};

// Native or worker-loading packages stay outside the bundle and ship in node_modules.
// vega (report SVGs) is ESM with top-level await: loaded at run time with import(), never bundled into cjs.
const nodeExternals = [
  'vscode',
  'better-sqlite3',
  'pdfjs-dist',
  '@embedpdf/pdfium',
  'playwright-core',
  'mocha',
  'vega',
  'vega-lite',
];

const webviewEntries = fs.existsSync('webview')
  ? fs
      .readdirSync('webview')
      .filter((f) => /^[a-z0-9-]+\.ts$/.test(f) && f !== 'env.d.ts')
      .map((f) => path.join('webview', f))
  : [];

/** Lists files under a folder (recursively) whose name matches `re`. */
function findFiles(dir, re) {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => re.test(f))
    .sort()
    .map((f) => path.join(dir, f));
}

/** `import('loupe:integration-tests')` loads every test/integration/**\/*.test.ts (no hand-kept list). */
const integrationTests = {
  name: 'integration-tests',
  setup(build) {
    build.onResolve({ filter: /^loupe:integration-tests$/ }, () => ({ path: 'integration-tests', namespace: 'loupe' }));
    build.onLoad({ filter: /.*/, namespace: 'loupe' }, () => ({
      resolveDir: __dirname,
      loader: 'ts',
      contents: findFiles('test/integration', /\.test\.ts$/)
        .map((f) => `import './${f.split(path.sep).join('/')}';`)
        .join('\n'),
      watchDirs: [path.join(__dirname, 'test/integration')],
    }));
  },
};

const common = {
  bundle: true,
  minify: production,
  sourcemap: !production,
  sourcesContent: false,
  logLevel: 'error',
  plugins: watch ? [problemMatcher] : [],
};

const contexts = [
  {
    ...common,
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    external: nodeExternals,
  },
  {
    ...common,
    entryPoints: ['src/cli.ts'],
    outfile: 'dist/cli.js',
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    external: nodeExternals,
    banner: { js: '#!/usr/bin/env node' },
  },
  // The documentation extraction worker (src/core/docs/extract-pool.ts extractWorkerPath looks for dist/extract-worker.js).
  {
    ...common,
    entryPoints: ['src/core/docs/extract-worker.ts'],
    outfile: 'dist/extract-worker.js',
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    external: nodeExternals,
  },
  // splitting: heavy libraries (vega, pdf.js) load as shared chunks only when a panel needs them.
  {
    ...common,
    entryPoints: webviewEntries,
    outdir: 'dist/webview',
    platform: 'browser',
    format: 'esm',
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    target: 'es2022',
    loader: { '.css': 'text' },
  },
  // Integration tests run inside the real extension host, so they are bundled like the extension.
  {
    ...common,
    entryPoints: ['test/integration/index.ts'],
    outfile: 'out/test/integration/index.js',
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    external: nodeExternals,
    sourcemap: true,
    plugins: [...common.plugins, integrationTests],
  },
  // Test-only panel (issue 13: a panel is one declaration + protocol + webview entry): its host side is loaded by the
  // extension only when LOUPE_TEST_PANELS names out/test/panels.js; never built by --production (the .vsix build).
  ...(production
    ? []
    : [
        {
          ...common,
          entryPoints: ['test/fixtures/panels/register.ts'],
          outfile: 'out/test/panels.js',
          platform: 'node',
          format: 'cjs',
          target: 'node22',
          external: nodeExternals,
        },
        {
          ...common,
          entryPoints: ['test/fixtures/panels/test-echo.ts'],
          outdir: 'dist/webview',
          platform: 'browser',
          format: 'esm',
          target: 'es2022',
          loader: { '.css': 'text' },
        },
      ]),
];

/** Files the bundles read at runtime (resolved from `dist/` by the code that uses them). */
function copyRuntimeFiles() {
  // The Python kernel driver (src/core/kernel/python-kernel.ts `driverPath()` looks in dist/kernel/).
  fs.mkdirSync('dist/kernel', { recursive: true });
  fs.copyFileSync('src/core/kernel/driver.py', 'dist/kernel/driver.py');
  // BLADE's Python driver (src/core/benchmarks/blade/eval/driver-py.ts `bladeDriverPath()` looks in dist/blade/).
  fs.mkdirSync('dist/blade', { recursive: true });
  fs.copyFileSync('src/core/benchmarks/blade/eval/blade_driver.py', 'dist/blade/blade_driver.py');
}

async function main() {
  // A production build starts clean so stale chunks and source maps never ship.
  if (production) fs.rmSync('dist', { recursive: true, force: true });
  copyRuntimeFiles();
  const ctxs = await Promise.all(
    contexts
      .filter((c) => (c.entryPoints || []).length > 0 && (c.entryPoints || []).every((e) => fs.existsSync(e)))
      .map((c) => esbuild.context(c)),
  );
  if (watch) {
    await Promise.all(ctxs.map((c) => c.watch()));
    return;
  }
  try {
    const results = await Promise.all(ctxs.map((c) => c.rebuild()));
    const errors = results.reduce((n, r) => n + r.errors.length, 0);
    if (errors) process.exitCode = 1;
  } catch (e) {
    // esbuild has already printed the errors (logLevel 'error' below); fail the build.
    process.exitCode = 1;
    if (!(e && e.errors)) throw e;
  } finally {
    await Promise.all(ctxs.map((c) => c.dispose()));
  }
  if (fs.existsSync('dist/cli.js')) fs.chmodSync('dist/cli.js', 0o755);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
