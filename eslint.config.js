import js from '@eslint/js'
import globals from 'globals'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.stryker-tmp/**',
      'reports/**',
      'bin/**',
      'bench/**/*.js',
      'src/lib/definition/fast-path/generated.ts',
      'src/lib/definition/network-form/nosana-validator.generated.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', {argsIgnorePattern: '^_'}],
      'no-console': 'error',
    },
  },
  {
    files: ['bench/**/*.ts'],
    rules: {'no-console': 'off'},
  },
  {files: ['scripts/**/*.js'], languageOptions: {globals: globals.node}},
  // The examples are programs of their own that print to their terminal.
  {files: ['examples/**/*.js'], languageOptions: {globals: globals.node}, rules: {'no-console': 'off'}},
  {files: ['test/**/*.ts'], rules: {'@typescript-eslint/no-unused-expressions': 'off'}},
  {
    // Node 20 and Node 22+ need different better-sqlite3 majors (src/lib/sqlite/open.ts): only openSqlite opens one.
    files: ['**/*.ts'],
    ignores: ['src/lib/sqlite/open.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: ['better-sqlite3', 'better-sqlite3-13'].map((name) => ({
            name,
            allowTypeImports: true,
            message: 'open SQLite with openSqlite (src/lib/sqlite/open.ts), which loads the driver this Node can run',
          })),
        },
      ],
    },
  },
)
