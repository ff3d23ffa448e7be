// @ts-check
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'test-results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // The example POS page runs in a browser.
    files: ['docs/example/**', 'renderer/**'],
    languageOptions: { globals: globals.browser },
  },
  {
    // The service core runs headless (CLI) and inside Electron's main process; only main/ may
    // touch Electron, so the core stays testable on plain Node.
    files: ['service/**', 'cloud/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'service/ and cloud/ never import electron.' }],
          patterns: [
            { group: ['electron/*'], message: 'service/ and cloud/ never import electron.' },
          ],
        },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'exit', message: 'Only hosts (main/, the CLIs) exit.' },
      ],
    },
  },
  {
    // A sandboxed preload is CommonJS: `import x = require()` is how TypeScript writes that.
    files: ['main/preload.cts'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The CLI entry points are hosts: they may exit and read the environment.
    files: ['service/cli.ts', 'cloud/cli.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
);
