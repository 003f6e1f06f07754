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
  { files: ['webview/**'], languageOptions: { globals: { ...globals.browser } } },
  { files: ['**/*.js', '**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
