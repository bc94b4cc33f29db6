// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Modules of packages/core that must stay pure: everything except the adapters. */
export const corePureFiles = ['packages/core/src/**/*.ts'];
export const coreAdapterFiles = [
  'packages/core/src/runtime/**',
  'packages/core/src/cloudmap/**',
  'packages/core/src/agent/**',
];

/** Imports the pure core must not make (docs/architecture.md#layers). */
const purePatterns = [
  {
    group: ['@kubernetes/client-node', '@kubernetes/client-node/*'],
    message:
      'packages/core pure modules must not import @kubernetes/client-node; put Kubernetes code in packages/core/src/runtime.',
  },
  {
    group: ['@aws-sdk/*'],
    message:
      'packages/core pure modules must not import @aws-sdk/*; put AWS code in packages/core/src/cloudmap.',
  },
  {
    group: [
      '**/runtime/**',
      '**/cloudmap/**',
      '**/agent/**',
      '../runtime',
      '../cloudmap',
      '../agent',
      './runtime',
      './cloudmap',
      './agent',
    ],
    message: 'packages/core pure modules must not import the adapters (runtime, cloudmap, agent).',
  },
];

export default tseslint.config(
  // .state/: harness and demo state (git-ignored); real-node runs leave containerd's image
  // filesystems there, bundles included.
  { ignores: ['**/dist/**', '**/node_modules/**', '**/*.js', '!eslint.config.js', '.state/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: false } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-console': 'off',
    },
  },
  {
    // docs/contributing.md#pure-core: the pure core knows neither Kubernetes nor AWS.
    files: corePureFiles,
    ignores: coreAdapterFiles,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: purePatterns,
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Only main.ts reads process.env (docs/contributing.md#config-and-logs).',
        },
      ],
    },
  },
  {
    // Issue 13: the planners work on the model and the port's types, never call the record
    // codec (records/ may use planning's naming; the other way round would be a cycle). They
    // may name a decoded record's type (the change feed's FeedRecord).
    files: ['packages/core/src/planning/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../records', '../records/*'],
              allowTypeImports: true,
              message: 'planning/ must not import the record codec (records/).',
            },
          ],
        },
      ],
    },
  },
  {
    // Issue 13 / docs/contributing.md#reconcile-shape: the agents read top to bottom, as named functions in small
    // files (no function over 80 lines, no file over 300).
    files: ['packages/export-agent/src/**/*.ts', 'packages/import-agent/src/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
      'max-lines': ['error', { max: 300 }],
    },
  },
  {
    // Timing helpers (sleep, backoff) are core's work-queue vocabulary; the Kubernetes runtime
    // does not reach into the AWS adapter for them.
    files: ['packages/core/src/runtime/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../cloudmap', '../cloudmap/*'],
              message: 'runtime/ must not import the Cloud Map adapter (cloudmap/).',
            },
          ],
        },
      ],
    },
  },
);
