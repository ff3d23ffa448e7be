// @ts-check
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import partMapPlugin from './eslint/part-map.js';

const noElectron = [
  { name: 'electron', message: 'only main/ touches Electron; the core runs on plain Node.' },
  { name: 'electron-store', message: 'only main/ touches Electron; the core runs on plain Node.' },
];
const outsideCore = [
  { path: 'main/', message: 'the tray app hosts the core; the core never reaches back.' },
  { path: 'renderer/', message: 'the window is reached only through the preload bridge.' },
];
const serviceParts = [
  ...outsideCore,
  {
    path: 'cloud/',
    except: ['service/cloud/embedded-ledger.ts'],
    message: 'the worker reaches the ledger over HTTP; shared code lives in common/.',
  },
];

/** The part map: each folder with what it may not import. */
function partMap() {
  const block = (files, forbid, packages = noElectron) => ({
    files,
    plugins: { 'part-map': partMapPlugin },
    rules: { 'part-map/allowed-imports': ['error', { forbid, packages }] },
  });
  return [
    block(
      ['common/**'],
      [
        ...outsideCore,
        { path: 'service/', message: 'common/ is the floor: it imports nothing above it.' },
        { path: 'cloud/', message: 'common/ is the floor: it imports nothing above it.' },
      ],
    ),
    block(
      ['cloud/**'],
      [
        ...outsideCore,
        { path: 'service/', message: 'the ledger shares code with the worker only via common/.' },
      ],
    ),
    block(['service/**'], serviceParts),
    block(
      ['service/card/**'],
      [
        ...serviceParts,
        { path: 'service/wallet/', message: 'the card layer knows nothing of wallets or money.' },
        { path: 'service/http/', message: 'the card layer knows nothing of HTTP.' },
      ],
    ),
    block(
      ['service/cloud/**'],
      [
        ...serviceParts,
        { path: 'service/wallet/', message: 'the ledger client knows nothing of use cases.' },
        { path: 'service/http/', message: 'the ledger client knows nothing of HTTP.' },
      ],
    ),
    block(
      ['service/wallet/**'],
      [...serviceParts, { path: 'service/http/', message: 'use cases know nothing of HTTP.' }],
    ),
    block(
      ['renderer/**'],
      [
        { path: 'main/', message: 'the window reaches the core only through window.cardWallet.' },
        {
          path: 'service/',
          message: 'the window reaches the core only through window.cardWallet.',
        },
        { path: 'cloud/', message: 'the window reaches the core only through window.cardWallet.' },
        { path: 'common/', message: 'the window reaches the core only through window.cardWallet.' },
      ],
    ),
    block(
      ['main/**'],
      [
        { path: 'renderer/', message: 'main/ loads the window as a page, never as a module.' },
        { path: 'cloud/', message: 'the tray app starts the ledger only through the service.' },
      ],
      [],
    ),
  ];
}

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'dist/',
      'client/dist/',
      'test-results/',
      'release/',
      'reports/',
      '.stryker-tmp/',
    ],
  },
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
  // The part map (README, "What is in here"): who may import whom, one block per folder. A
  // later block replaces an earlier one's options for the files it matches, so each block
  // lists every rule of its folder.
  ...partMap(),
  {
    // The service core runs headless (CLI) and inside Electron's main process.
    files: ['common/**', 'service/**', 'cloud/**'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'exit', message: 'Only hosts (main/, the CLIs) exit.' },
      ],
    },
  },
  {
    // One error table per deployable: a code is added to the table, never made up inline.
    files: ['service/**'],
    ignores: ['service/errors.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='AppError']",
          message: 'Every error code comes from the table in service/errors.ts.',
        },
      ],
    },
  },
  {
    files: ['cloud/**'],
    ignores: ['cloud/errors.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='LedgerError']",
          message: 'Every error code comes from the table in cloud/errors.ts.',
        },
      ],
    },
  },
  {
    // The client package stands alone (browser and Node, no runtime dependency): its sources
    // import only each other, never a package or another part of this repository. Its build
    // script (client/scripts/) runs in Node at build time and ships nothing.
    files: ['client/**'],
    ignores: ['client/scripts/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!\\./)',
              message: 'the client imports only its own files (./x.ts): it ships alone.',
            },
          ],
        },
      ],
    },
  },
  {
    // A sandboxed preload is CommonJS: `import x = require()` is how TypeScript writes that.
    // So is the stand-in for the CommonJS PC/SC binding the tests give the PC/SC host.
    files: ['main/preload.cts', 'test/support/fake-pcsc-binding.cts'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The CLI entry points are hosts: they may exit and read the environment.
    files: ['service/cli.ts', 'cloud/cli.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
);
