// Lint that catches the expensive mistakes: a forgotten await on an activity, Node built-ins in workflow code, an
// import cycle, and an import across a boundary of the layout (docs/architecture.md, "The rooms": the "may import" column).
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

/**
 * What each room may import (besides packages and itself), as the "may import" column of docs/architecture.md's
 * table says (test/unit/layout-lint.test.ts holds the two to each other); test/ and bench/ may import everything.
 */
const MAY_IMPORT = {
  contracts: ['core'],
  workflows: ['contracts', 'core'],
  activities: ['contracts', 'services', 'core', 'backends', 'agents', 'formats', 'db'],
  services: ['db', 'core', 'contracts', 'tasks'],
  workers: ['workflows', 'activities', 'contracts', 'core', 'db', 'temporal'],
  db: ['core', 'contracts'],
  core: [],
  tasks: ['core', 'contracts'],
  formats: ['core'],
  trainers: ['core', 'formats'],
  temporal: ['core'],
  backends: ['core', 'contracts'],
  agents: ['core'],
  server: ['services', 'contracts', 'core', 'formats', 'temporal', 'db'],
  stack: ['db', 'workers', 'backends', 'contracts', 'core', 'temporal'],
  cli: ['services', 'server', 'stack', 'workers', 'activities', 'contracts', 'core', 'temporal', 'backends', 'agents', 'db'],
};

const boundaryZones = ROOMS.map((room) => ({
  target: `./${room}`,
  from: ROOMS.filter((other) => other !== room && !MAY_IMPORT[room].includes(other)).map((other) => `./${other}`),
  message: `${room}/ may import only ${MAY_IMPORT[room].join(', ') || 'itself'} (docs/architecture.md, The rooms)`,
}));
// Only services/ and db/ speak SQL: the activities, the CLI and the servers open a pool (db/client) and hand it to
// services/, never the schema.
boundaryZones.push({
  target: ['./activities', './cli', './server'],
  from: './db/schema.ts',
  message: 'activities/, cli/ and server/ reach PostgreSQL through services/, never db/schema (docs/architecture.md)',
});
// services/ reaches the tasks through one door, services/task-registry.ts.
boundaryZones.push({
  target: ['./services/!(task-registry).ts', './services/*/**'],
  from: './tasks',
  message: 'services/ reaches tasks/ only through services/task-registry.ts (docs/architecture.md)',
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
