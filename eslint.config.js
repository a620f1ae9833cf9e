import tseslint from 'typescript-eslint';

/** Repeated in every no-restricted-imports setting: a later one replaces an earlier one, it does not add to it. */
const DEEP_IMPORTS = { group: ['@trellis/*/src/*', '@trellis/*/dist/*'], message: 'import a package through its entry, not its internals' };

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'data/**', 'packages/*/test/fixtures/**', 'scripts/**', 'packages/ui/scripts/**', 'eslint.config.js', 'packages/core/src/protocol/generated/**'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      // The bin shim is plain JavaScript: it must run before the first build; so is the compose set-up script, run by the image's node.
      parserOptions: { projectService: { allowDefaultProject: ['packages/cli/bin/*.js', 'deploy/*.mjs'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] }] },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      'no-restricted-imports': ['error', { patterns: [DEEP_IMPORTS] }],
      'no-restricted-syntax': [
        'error',
        {
          selector: "TSAsExpression[typeAnnotation.typeName.name='Error']",
          message: 'a caught value is unknown: use toError(value) from @trellis/core, or narrow with instanceof Error',
        },
      ],
    },
  },
  {
    // The edges parse, call one service function and shape the answer: the store is the services' (runs/, definitions/).
    files: ['packages/coordinator/src/api/**', 'packages/coordinator/src/grpc/**'],
    rules: {
      'no-restricted-imports': ['error', { paths: [{ name: '@trellis/store', message: 'REST routes and gRPC handlers call the service layer (runs/, definitions/), not the store' }], patterns: [DEEP_IMPORTS] }],
    },
  },
);
