import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      '.venv/',
      '.carry/',
      '.scratch-cuda/',
      '.kernelgate/',
      'kernels/',
      'coverage/',
      'src/results/results-types.ts',
      // uPlot as published (vendor/uplot/README.md), inlined into the dashboard page as it is
      'vendor/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Plain .mjs scripts run on node; TypeScript files get these from @types/node.
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(
        ['process', 'console', 'URL', 'Buffer', 'setTimeout', 'clearTimeout'].map((name) => [
          name,
          'readonly',
        ]),
      ),
    },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
);
