// Lint that catches the expensive mistakes: a forgotten await on an activity, Node built-ins in workflow code, an
// import cycle, and an import across a boundary of the layout (../shared/DESIGN.md, "Layout": the "may import" column).
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

/** Every top-level room of the tree. */
const ROOMS = [
  'contracts',
  'workflows',
  'activities',
  'services',
  'workers',
  'db',
  'core',
  'tasks',
  'formats',
  'trainers',
  'backends',
  'agents',
  'server',
  'stack',
  'temporal',
  'cli',
];

/** What each room may import (besides packages and itself); test/ and bench/ may import everything. */
const MAY_IMPORT = {
  contracts: ['core'],
  workflows: ['contracts', 'core'],
  activities: ['contracts', 'services', 'core', 'backends', 'agents', 'db', 'tasks', 'formats'],
  services: ['contracts', 'db', 'core', 'tasks'],
  workers: ['workflows', 'activities', 'contracts', 'core', 'db', 'temporal'],
  db: ['core', 'contracts'],
  core: [],
  tasks: ['core', 'formats', 'trainers'],
  formats: ['core'],
  trainers: ['core', 'formats'],
  backends: ['core', 'contracts'],
  agents: ['core'],
  server: ['services', 'contracts', 'core', 'db', 'temporal', 'formats'],
  stack: ['db', 'contracts', 'core', 'temporal', 'backends'],
  temporal: ['core'],
  cli: ['services', 'server', 'stack', 'contracts', 'core', 'db', 'temporal', 'backends', 'tasks', 'agents', 'workers'],
};

const boundaryZones = ROOMS.map((room) => ({
  target: `./${room}`,
  from: ROOMS.filter((other) => other !== room && !MAY_IMPORT[room].includes(other)).map((other) => `./${other}`),
  message: `${room}/ may import only ${MAY_IMPORT[room].join(', ') || 'itself'} (../shared/DESIGN.md, Layout)`,
}));
// The CLI and the servers open the database (db/client) but read and write it through services/, never the schema.
boundaryZones.push({
  target: ['./cli', './server'],
  from: './db/schema.ts',
  message: 'the CLI and the servers use services/ for PostgreSQL',
});

export default tseslint.config(
  {
    ignores: ['node_modules/**', '.flywheel/**', 'db/migrations/**', 'dist/**', 'coverage/**', 'test-artifacts/**', '**/*.js', '**/*.mjs'],
  },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.base],
    plugins: { 'import-x': importX },
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json'] })],
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': ['error', { zones: boundaryZones }],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'workflow code is deterministic: no Node built-ins' })),
          patterns: [{ group: ['pg', 'drizzle-orm*'], message: 'workflows call these through activities' }],
        },
      ],
    },
  },
);
