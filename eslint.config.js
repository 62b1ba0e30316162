import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  {ignores: ['dist/**', 'node_modules/**', 'bin/**', 'bench/**/*.js']},
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', {argsIgnorePattern: '^_'}],
      'no-console': 'error',
    },
  },
  {files: ['test/**/*.ts'], rules: {'@typescript-eslint/no-unused-expressions': 'off'}},
)
