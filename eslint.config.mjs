// Lint that catches the expensive mistakes: a forgotten await on an activity, Node built-ins in workflow code.
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  { ignores: ['node_modules/**', '.flywheel/**', 'db/migrations/**', 'dist/**', 'coverage/**', 'test-artifacts/**', '**/*.js', '**/*.mjs'] },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.base],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'workflow code is deterministic: no Node built-ins' })),
          patterns: [
            // Types are fine (they vanish at bundling); values would pull I/O into the workflow sandbox.
            { group: ['../activities/*', '../db/*', '../backends/*', '../agents/*', 'pg', 'drizzle-orm*'], message: 'workflows call these through activities', allowTypeImports: true },
          ],
        },
      ],
    },
  },
);
