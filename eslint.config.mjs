// One lint setup for host, core, protocol, webview, tests and perf.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const noVscode = {
  'no-restricted-imports': ['error', {
    paths: [{ name: 'vscode', message: 'src/core, src/protocol, webview, test/unit and test/perf must run without VS Code. Put VS Code glue in src/vscode.' }],
    patterns: [{ group: ['**/vscode/**', '**/extension', '**/extension.ts'], message: 'Core code must not depend on the VS Code glue layer.' }],
  }],
};


// Benchmark names: only a benchmark's own folder (src/core/benchmarks/<name>/) compares a suite or benchmark with a
// benchmark name; everything else asks the registry (src/core/benchmarks/registry.ts). Issue 12.
const SUITE_NAME = '/^(longda|blade|blade-mcq|ddr|analystbench)$/';
const SUITE_FIELD = '/^(suite|benchmark|kind|suiteKind)$/';
const suiteNameMessage = 'Do not branch on a benchmark name here: add a member to BenchmarkDefinition (src/core/benchmarks/types.ts) and ask the registry.';
// Only the store and the engine factories of higher-layer stores (annotationStoreOf) reach the SQLite handle (issue 12).
const noSqliteHandle = { selector: "ImportSpecifier[imported.name='sqliteHandleOf']", message: 'Use the RunStore interface (src/core/store/types.ts); only src/core/store and engine factories (annotationStoreOf) touch the SQLite handle.' };
const noSuiteNames = {
  'no-restricted-syntax': ['error', noSqliteHandle,
    { selector: `BinaryExpression:has(> Literal[value=${SUITE_NAME}]):has(> MemberExpression[property.name=${SUITE_FIELD}])`, message: suiteNameMessage },
    { selector: `BinaryExpression:has(> Literal[value=${SUITE_NAME}]):has(> Identifier[name=${SUITE_FIELD}])`, message: suiteNameMessage },
    { selector: `SwitchStatement[discriminant.property.name=${SUITE_FIELD}] > SwitchCase > Literal[value=${SUITE_NAME}]`, message: suiteNameMessage },
    { selector: `SwitchStatement[discriminant.name=${SUITE_FIELD}] > SwitchCase > Literal[value=${SUITE_NAME}]`, message: suiteNameMessage },
  ],
};

// Layers of src/core (issue 12): util, suites, store, kernel < docs, env < agent, eval < benchmarks < runs < ui.
// A lower layer never imports a higher one; agent and eval do not import each other; core imports no protocol
// types except the view models in core/ui (type imports only).
const layer = (banned, extra = []) => ({
  'no-restricted-imports': ['error', {
    paths: [{ name: 'vscode', message: 'src/core must run without VS Code.' }],
    patterns: [
      { group: ['**/vscode/**', '**/extension', '**/extension.ts'], message: 'Core code must not depend on the VS Code glue layer.' },
      ...banned.map((b) => ({ group: [`**/core/${b}/**`, `../${b}/**`, `../../${b}/**`], message: `this layer must not import src/core/${b} (a higher layer, or agent/eval across): see CONTRIBUTING.md "Layers"` })),
      ...extra,
    ],
  }],
});
const noProtocol = { group: ['**/protocol/**'], message: 'src/core must not import src/protocol (only the view models in src/core/ui may, as types).' };

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', '.cache/**', 'test-results/**', '.vscode-test/**', 'media/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      'no-console': 'off',
      curly: ['error', 'multi-line'],
      eqeqeq: ['error', 'smart'],
    },
  },
  { files: ['src/core/**', 'src/protocol/**', 'webview/**', 'test/unit/**', 'test/perf/**', 'benchmarks/**'], rules: noVscode },

  { files: ['src/**/*.ts', 'webview/**/*.ts'], ignores: ['src/core/benchmarks/*/**'], rules: noSuiteNames },
  { files: ['src/core/benchmarks/*/**'], rules: { 'no-restricted-syntax': ['error', noSqliteHandle] } },
  // engine factory of the BLADE ground-truth store (like annotationStoreOf / checklistStoreOf)
  { files: ['src/core/benchmarks/blade/gt-versions.ts'], rules: { 'no-restricted-syntax': 'off' } },
  { files: ['src/core/store/**', 'src/core/annotations/index.ts', 'src/core/annotations/checklists.ts'], rules: { 'no-restricted-syntax': noSuiteNames['no-restricted-syntax'].filter((x) => x !== noSqliteHandle) } },
  { files: ['src/core/util/**', 'src/core/suites/**', 'src/core/store/**', 'src/core/kernel/**'], rules: layer(['docs', 'agent', 'eval', 'annotations', 'benchmarks', 'runs', 'ui'], [noProtocol]) },
  { files: ['src/core/docs/**', 'src/core/env/**'], rules: layer(['agent', 'eval', 'annotations', 'benchmarks', 'runs', 'ui'], [noProtocol]) },
  { files: ['src/core/agent/**'], rules: layer(['eval', 'annotations', 'benchmarks', 'runs', 'ui'], [noProtocol]) },
  { files: ['src/core/eval/**'], rules: layer(['agent', 'annotations', 'benchmarks', 'runs', 'ui'], [noProtocol]) },
  { files: ['src/core/annotations/**'], rules: layer(['agent', 'benchmarks', 'runs', 'ui'], [noProtocol]) },
  { files: ['src/core/benchmarks/**'], rules: layer(['runs', 'ui'], [noProtocol]) },
  { files: ['src/core/runs/**'], rules: layer(['ui'], [noProtocol]) },
  { files: ['src/core/ui/**'], rules: { 'no-restricted-imports': 'off', '@typescript-eslint/no-restricted-imports': ['error', { paths: [{ name: 'vscode', message: 'src/core must run without VS Code.' }], patterns: [{ group: ['**/vscode/**', '**/extension', '**/extension.ts'], message: 'Core code must not depend on the VS Code glue layer.' }, { ...noProtocol, allowTypeImports: true }] }] } },
  // Store calls are asynchronous: a call nobody awaits loses its error (issue 12).
  // Issue 36: a run's recorded workspace is a path read from the store, never trusted; it is read only by
  // trustedRunFolder (src/core/store/run-folder.ts), which checks it against the runs folder this user configured.
  { files: ['src/**/*.ts'], ignores: ['src/core/store/run-folder.ts'], rules: { 'no-restricted-properties': ['error', { property: 'storedWorkspace', message: 'A path read from the store is never trusted (issue 36): use trustedRunFolder / runFolderOf / requireRunFolder (src/core/store/run-folder.ts) with the runs folder this user configured.' }] } },
  { files: ['src/**/*.ts'], languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } }, rules: { '@typescript-eslint/no-floating-promises': ['error', { ignoreVoid: true }] } },
  { files: ['webview/**'], languageOptions: { globals: { ...globals.browser } } },
  { files: ['**/*.js', '**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
