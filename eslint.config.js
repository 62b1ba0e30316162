import js from '@eslint/js'
import globals from 'globals'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  {ignores: ['dist/**', 'node_modules/**', '.stryker-tmp/**', 'reports/**', 'bin/**', 'bench/**/*.js', 'src/lib/definition/fast-path/generated.ts', 'src/lib/definition/network-form/nosana-validator.generated.ts']},
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
  {files: ['test/**/*.ts'], rules: {'@typescript-eslint/no-unused-expressions': 'off'}},
)
