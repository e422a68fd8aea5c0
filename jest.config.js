/** One Temporal dev server and one PostgreSQL per test run, started in globalSetup. */
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
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  testTimeout: 120000,
  maxWorkers: 1,
};
