/**
 * One Temporal dev server and one PostgreSQL per test run, started in globalSetup, shared by two jest workers: each
 * test file makes its own database, task-queue prefix, scratch home and free ports, and a file that stops a server
 * stops one of its own; a file timed on its own runs (the fault suite's) runs alone (docs/testing.md, "Two files at a
 * time").
 */
const ESM_ONLY = '(@kubernetes/client-node|openid-client|oauth4webapi|jose)';

module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.tsx?$': ['@swc/jest'],
    // @kubernetes/client-node 1.x and its OIDC dependencies ship ES modules only: Node 20 require()s them, jest's
    // module runtime cannot, so they are compiled to CommonJS for the tests.
    [`/node_modules/${ESM_ONLY}/.+\\.js$`]: ['@swc/jest', { module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: [`/node_modules/(?!${ESM_ONLY}/)`],
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/test/faults/'],
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  // Each file holds a shared slot; the fault suite's runs alone (test/setup/file-slots.ts runAlone).
  setupFilesAfterEnv: ['<rootDir>/test/setup/shared-slot.ts'],
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  testTimeout: 120000,
  maxWorkers: 2,
};
