import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'data/**', 'packages/*/test/fixtures/**', 'scripts/**', 'eslint.config.js'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      // The bin shim is plain JavaScript: it must run before the first build.
      parserOptions: { projectService: { allowDefaultProject: ['packages/cli/bin/*.js'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] }] },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      'no-restricted-imports': ['error', { patterns: [{ group: ['@trellis/*/src/*', '@trellis/*/dist/*'], message: 'import a package through its entry, not its internals' }] }],
      'no-restricted-syntax': [
        'error',
        {
          selector: "TSAsExpression[typeAnnotation.typeName.name='Error']",
          message: 'a caught value is unknown: use toError(value) from @trellis/core, or narrow with instanceof Error',
        },
      ],
    },
  },
);
