// One lint setup for host, core, protocol, webview, tests and perf.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const noVscode = {
  'no-restricted-imports': [
    'error',
    {
      paths: [
        {
          name: 'vscode',
          message:
            'src/core, src/protocol, webview, test/unit and test/perf must run without VS Code. Put VS Code glue in src/vscode.',
        },
      ],
      patterns: [
        {
          group: ['**/vscode/**', '**/extension', '**/extension.ts'],
          message: 'Core code must not depend on the VS Code glue layer.',
        },
      ],
    },
  ],
};

// Benchmark names: only a benchmark's own folder (src/core/benchmarks/<name>/) compares a suite or benchmark with a
// benchmark name; everything else asks the registry (src/core/benchmarks/registry.ts). Issue 12.
const SUITE_NAME = '/^(longda|blade|blade-mcq|ddr|analystbench)$/';
const SUITE_FIELD = '/^(suite|benchmark|kind|suiteKind)$/';
const suiteNameMessage =
  'Do not branch on a benchmark name here: add a member to BenchmarkDefinition (src/core/benchmarks/types.ts) and ask the registry.';
// Only the store and the engine factories of higher-layer stores (annotationStoreOf) reach the SQLite handle (issue 12).
const noSqliteHandle = {
  selector: "ImportSpecifier[imported.name='sqliteHandleOf']",
  message:
    'Use the RunStore interface (src/core/store/types.ts); only src/core/store and engine factories (annotationStoreOf) touch the SQLite handle.',
};
// Issue 36: a documentation index (src/core/docs) reads its root with node:fs, so its root is never a place an agent
// can write (a run or task workspace, a stored workspace): documents are read from the suite's own files
// (DocIndexOptions.sources names them as the agent sees them).
const WS_PROP = '/^(workspace|storedWorkspace)$/';
const docsRootMessage =
  "A documentation root is never a run or task workspace (issue 36): the agent can plant a link, FIFO or hard link there. Read the suite's own files (the block's visible.docs paths; DocIndexOptions.sources).";
const noWorkspaceDocRoot = [
  {
    selector: `VariableDeclarator[id.name=/[rR]oot$/] MemberExpression[property.name=${WS_PROP}]`,
    message: docsRootMessage,
  },
  { selector: `Property[key.name=/[rR]oot$/] MemberExpression[property.name=${WS_PROP}]`, message: docsRootMessage },
  { selector: `Property[key.name=/[rR]oot$/] > Identifier[name=/[wW]orkspace$/]`, message: docsRootMessage },
  {
    selector: `CallExpression[callee.name=/^(openDocIndex|acquireDocIndex|docIndexLease|sharedDocIndex|openDocs|docsFolderFiles)$/] :matches(MemberExpression[property.name=${WS_PROP}], Identifier[name=/[wW]orkspace$/])`,
    message: docsRootMessage,
  },
];
// Item types (issue 40): only a benchmark's folder names its item types; the surfaces ask its definition's
// `itemTypes`. The names are read from each benchmark's declaration (`type: '...'` in src/core/benchmarks/<kind>/items.ts),
// so a new benchmark's item types are refused outside its folder without editing this file.
const itemTypeNames = readdirSync(new URL('./src/core/benchmarks/', import.meta.url), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) => {
    try {
      return [
        ...readFileSync(new URL(`./src/core/benchmarks/${d.name}/items.ts`, import.meta.url), 'utf8').matchAll(
          /^\s*type: '([a-z0-9-]+)';/gm,
        ),
      ].map((m) => m[1]);
    } catch {
      return [];
    }
  });
if (!itemTypeNames.length) throw new Error('eslint.config.mjs: no item types found in src/core/benchmarks/*/items.ts');
const ITEM_TYPE = `/^(${itemTypeNames.map((n) => n.replace(/-/g, '\\-')).join('|')})$/`;
const itemTypeMessage =
  "Do not name a benchmark's item type here: its definition's itemTypes (src/core/benchmarks/types.ts, ItemTypeView) says how an item is shown; ask the registry (itemTypeView).";
const noItemTypes = [
  { selector: `Literal[value=${ITEM_TYPE}]`, message: itemTypeMessage },
  {
    selector: `TemplateLiteral[expressions.length=0] > TemplateElement[value.cooked=${ITEM_TYPE}]`,
    message: itemTypeMessage,
  },
];
const noSuiteNames = {
  'no-restricted-syntax': [
    'error',
    noSqliteHandle,
    ...noWorkspaceDocRoot,
    ...noItemTypes,
    {
      selector: `BinaryExpression:has(> Literal[value=${SUITE_NAME}]):has(> MemberExpression[property.name=${SUITE_FIELD}])`,
      message: suiteNameMessage,
    },
    {
      selector: `BinaryExpression:has(> Literal[value=${SUITE_NAME}]):has(> Identifier[name=${SUITE_FIELD}])`,
      message: suiteNameMessage,
    },
    {
      selector: `SwitchStatement[discriminant.property.name=${SUITE_FIELD}] > SwitchCase > Literal[value=${SUITE_NAME}]`,
      message: suiteNameMessage,
    },
    {
      selector: `SwitchStatement[discriminant.name=${SUITE_FIELD}] > SwitchCase > Literal[value=${SUITE_NAME}]`,
      message: suiteNameMessage,
    },
  ],
};

// Agent text reaches a webview's DOM only through webview/shared/agent-html.ts (issue 38): no HTML sinks, no
// DOMPurify or marked of a panel's own, no <style> elements (the panels' CSP refuses inline style: adoptCss).
const agentHtmlMessage =
  'Set text (h(), textContent) or render agent content with agentHtml / agentMarkdown (webview/shared/agent-html.ts).';
const noHtmlSinks = {
  'no-restricted-syntax': [
    ...noSuiteNames['no-restricted-syntax'],
    {
      selector: 'AssignmentExpression[left.property.name=/^(innerHTML|outerHTML|srcdoc)$/]',
      message: agentHtmlMessage,
    },
    {
      selector:
        'CallExpression[callee.property.name=/^(insertAdjacentHTML|createContextualFragment|parseFromString)$/]',
      message: agentHtmlMessage,
    },
    {
      selector: "CallExpression[callee.name='h'][arguments.0.value='style']",
      message: 'No <style> elements (the CSP refuses inline style): adoptCss (webview/shared/styles.ts).',
    },
  ],
  'no-restricted-imports': [
    'error',
    {
      paths: [
        ...noVscode['no-restricted-imports'][1].paths,
        { name: 'dompurify', message: agentHtmlMessage },
        { name: 'marked', message: agentHtmlMessage },
      ],
      patterns: noVscode['no-restricted-imports'][1].patterns,
    },
  ],
};

// Layers (issues 12, 40): every folder of src and of src/core imports only the folders it may, type imports included.
// `loupe/layers` resolves each relative import to the folder it lands in and checks it against LAYERS; the cycle test
// (test/unit/architecture/cycles.test.ts) checks that the folders form no cycle. See CONTRIBUTING.md "Layers".
// src/core, lowest first: a folder imports its own layer's folders (where the layer says so) and every lower layer.
const CORE_LAYERS = [
  { folders: ['util'] },
  { folders: ['env', 'suites', 'kernel', 'store', 'stats'], across: true }, // environment; Suite model; kernel; run store; statistics
  { folders: ['docs'] },
  { folders: ['agent', 'eval'] }, // agent and eval do not import each other
  { folders: ['annotations'] },
  { folders: ['failures', 'review'] }, // failure tags and taxonomies; review alignment and pairwise votes
  { folders: ['benchmarks'] },
  { folders: ['runs'] },
];
const CORE_FOLDERS = CORE_LAYERS.flatMap((l) => l.folders);
/** What each unit may import (besides itself): `core:<folder>` for src/core, else the top folder of src or webview. */
const LAYERS = {
  ...Object.fromEntries(
    CORE_LAYERS.flatMap((l, i) =>
      l.folders.map((f) => [
        `core:${f}`,
        [...CORE_LAYERS.slice(0, i).flatMap((x) => x.folders), ...(l.across ? l.folders : []), 'version.ts'].map(
          (x) => `core:${x}`,
        ),
      ]),
    ),
  ),
  'core:version.ts': [],
  protocol: [], // typed host⇄webview messages: nothing but protocol
  app: [...CORE_FOLDERS.map((f) => `core:${f}`), 'core:version.ts', 'protocol'], // host-neutral use cases and view models
  cli: [...CORE_FOLDERS.map((f) => `core:${f}`), 'core:version.ts', 'app'], // one file per loupe subcommand
  vscode: [...CORE_FOLDERS.map((f) => `core:${f}`), 'core:version.ts', 'app', 'protocol'], // thin VS Code glue
  'extension.ts': ['vscode', ...CORE_FOLDERS.map((f) => `core:${f}`)], // activation only
  'cli.ts': ['cli', ...CORE_FOLDERS.map((f) => `core:${f}`), 'core:version.ts'],
  webview: ['protocol'], // browser bundles
};
const ROOT_DIR = import.meta.dirname;
/** The layer unit of an absolute path (`core:runs`, `app`, `webview`, ...), or null outside src and webview. */
function unitOf(file) {
  const rel = path.relative(ROOT_DIR, file).split(path.sep);
  if (rel[0] === 'webview') return 'webview';
  if (rel[0] !== 'src' || rel.length < 2) return null;
  if (rel[1] === 'core') return `core:${rel[2]}`; // a file directly in src/core (version.ts) is its own unit
  return rel[1];
}
const layersPlugin = {
  rules: {
    layers: {
      meta: {
        type: 'problem',
        schema: [],
        messages: {
          layer:
            '{{from}} must not import {{to}} ({{spec}}): {{from}} may import {{allowed}}. See CONTRIBUTING.md "Layers".',
        },
      },
      create(context) {
        const from = unitOf(context.filename);
        if (!from || !(from in LAYERS)) return {};
        const check = (node, source) => {
          const spec = source && typeof source.value === 'string' ? source.value : null;
          if (!spec || !spec.startsWith('.')) return;
          const to = unitOf(path.resolve(path.dirname(context.filename), spec));
          if (!to || to === from || LAYERS[from].includes(to)) return;
          context.report({
            node: source,
            messageId: 'layer',
            data: { from, to, spec, allowed: LAYERS[from].join(', ') || 'nothing outside itself' },
          });
        };
        return {
          ImportDeclaration: (n) => check(n, n.source),
          ExportNamedDeclaration: (n) => check(n, n.source),
          ExportAllDeclaration: (n) => check(n, n.source),
          ImportExpression: (n) => check(n, n.source),
        };
      },
    },
  },
};
// Besides loupe/layers, src/core never reaches vscode (a package, not a folder) and keeps node:fs out of the contained scope.
const layer = (_banned = [], extra = [], paths = []) => ({
  'no-restricted-imports': [
    'error',
    {
      paths: [{ name: 'vscode', message: 'src/core and src/app must run without VS Code.' }, ...paths],
      patterns: [
        {
          group: ['**/vscode/**', '**/extension', '**/extension.ts'],
          message: 'Core and app code must not depend on the VS Code glue layer.',
        },
        ...extra,
      ],
    },
  ],
});

// Contained file access (issue 36): host code of tool sets, runs, scoring, review, failure tagging, artefact capture
// and exports touches agent-writable places (run workspace, run folder, task workspace) only through
// src/core/util/contained.ts. A linter cannot know which paths an agent can write; a module boundary can: no node:fs
// in these files. The rule is merged into each layer's no-restricted-imports below (ESLint keeps one per file).
const containedMessage =
  'Host code here touches places an agent can write: use src/core/util/contained.ts (readContainedFile, writeContainedFile, statContained, listContained, ...), never node:fs (issue 36; CONTRIBUTING "Containment"). Suite files are read in src/core/suites/ or a loader.';
const noFs = ['node:fs', 'fs', 'node:fs/promises', 'fs/promises'].map((name) => ({ name, message: containedMessage }));
const CONTAINED_SCOPE = [
  'src/core/agent/**', // tool-set types, the loop
  'src/core/benchmarks/*/toolset.ts', // tool sets
  'src/core/benchmarks/*/index.ts', // definitions: run hooks, results exports
  'src/core/benchmarks/*/score.ts',
  'src/core/benchmarks/*/eval/**', // scoring
  'src/core/benchmarks/*/review.ts',
  'src/core/benchmarks/*/failures.ts', // review, failure tagging
  'src/core/benchmarks/workspace.ts', // task workspaces
  'src/core/runs/**',
  'src/core/eval/**',
  'src/core/review/**',
  'src/core/failures/**',
  'src/core/store/artefacts.ts',
  'src/core/store/export.ts',
  'src/app/review/**',
  'src/app/failures/**', // review sources, failure sampling and reports
];
// The exceptions: each reads only files Loupe or the user owns, never a place an agent can write.
const CONTAINED_EXCEPTIONS = [
  'src/core/benchmarks/blade/eval/score.ts', // the BLADE dataset folder (data.csv, annotations.csv) of the suite; the agent's submission is a store row
  'src/core/benchmarks/blade/eval/driver-py.ts', // Loupe's own BLADE scoring driver (dist/blade/blade_driver.py)
  'src/core/runs/mcp/session.ts', // the block's visible documentation at its suite path (only files the block lists)
  'src/core/eval/judges/recorded.ts', // a recorded-verdicts file the user names (--judge recorded:FILE)
  'src/core/runs/inspect/write-log.ts', // the .eval / .json file the user names as the export's destination (loupe export inspect --out)
  'src/core/runs/inspect/read-log.ts', // an Inspect log file the user names (loupe import inspect, Import Inspect Logs…), never a run workspace
  'src/core/failures/taxonomy.ts', // .loupe/taxonomies/*.json of the user's VS Code workspace folder, not a run workspace
];

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', '.cache/**', 'test-results/**', '.vscode-test/**', 'media/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      'no-console': 'off',
      curly: ['error', 'multi-line'],
      eqeqeq: ['error', 'smart'],
    },
  },
  {
    files: ['src/core/**', 'src/protocol/**', 'webview/**', 'test/unit/**', 'test/perf/**', 'benchmarks/**'],
    rules: noVscode,
  },

  { files: ['src/**/*.ts', 'webview/**/*.ts'], ignores: ['src/core/benchmarks/*/**'], rules: noSuiteNames },
  { files: ['webview/**/*.ts'], ignores: ['webview/shared/agent-html.ts'], rules: noHtmlSinks },
  {
    files: ['src/core/benchmarks/*/**'],
    rules: { 'no-restricted-syntax': ['error', noSqliteHandle, ...noWorkspaceDocRoot] },
  },
  // Issue 38: notifications may quote agent-derived text; they go through src/vscode/messages.ts (controls escaped,
  // command links broken).
  {
    files: ['src/vscode/**/*.ts', 'src/extension.ts'],
    ignores: ['src/vscode/messages.ts'],
    rules: {
      'no-restricted-syntax': [
        ...noSuiteNames['no-restricted-syntax'],
        {
          selector:
            "MemberExpression[object.object.name='vscode'][object.property.name='window'][property.name=/^show(Information|Warning|Error)Message$/]",
          message:
            'Use showInformationMessage / showWarningMessage / showErrorMessage from src/vscode/messages.ts: a message may quote agent text (issue 38).',
        },
      ],
    },
  },
  // engine factory of the BLADE ground-truth store (like annotationStoreOf / checklistStoreOf)
  { files: ['src/core/benchmarks/blade/gt-versions.ts'], rules: { 'no-restricted-syntax': 'off' } },
  {
    files: ['src/core/store/**', 'src/core/annotations/index.ts', 'src/core/annotations/checklists.ts'],
    rules: { 'no-restricted-syntax': noSuiteNames['no-restricted-syntax'].filter((x) => x !== noSqliteHandle) },
  },
  // src/core and src/app never import the vscode package; contained file access (issue 36): node:fs banned in the code
  // that touches agent-writable places (CONTAINED_SCOPE), but for the listed exceptions.
  { files: ['src/core/**', 'src/app/**'], rules: layer() },
  { files: CONTAINED_SCOPE, ignores: CONTAINED_EXCEPTIONS, rules: layer([], [], noFs) },
  { files: ['src/**/*.ts', 'webview/**/*.ts'], plugins: { loupe: layersPlugin }, rules: { 'loupe/layers': 'error' } },
  // Store calls are asynchronous: a call nobody awaits loses its error (issue 12).
  // Issue 36: a run's recorded workspace is a path read from the store, never trusted; it is read only by
  // trustedRunFolder (src/core/store/run-folder.ts), which checks it against the runs folder this user configured.
  {
    files: ['src/**/*.ts'],
    ignores: ['src/core/store/run-folder.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        {
          property: 'storedWorkspace',
          message:
            'A path read from the store is never trusted (issue 36): use trustedRunFolder / runFolderOf / requireRunFolder (src/core/store/run-folder.ts) with the runs folder this user configured.',
        },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: { '@typescript-eslint/no-floating-promises': ['error', { ignoreVoid: true }] },
  },
  { files: ['webview/**'], languageOptions: { globals: { ...globals.browser } } },
  { files: ['**/*.js', '**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
