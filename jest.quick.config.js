/**
 * The quick tier, `npm run test:quick`, for the inner development loop: unit tests, the replay suite, and workflow
 * tests over stub activities on the time-skipping test server. No Temporal dev server, no PostgreSQL, no trainer
 * run longer than a second; `npm test` runs these files too, with everything else.
 */
const base = require('./jest.config');

module.exports = {
  ...base,
  testMatch: [
    '<rootDir>/test/unit/**/*.test.ts',
    '<rootDir>/test/replay/**/*.test.ts',
    '<rootDir>/test/outer/approval.test.ts',
    '<rootDir>/test/cli/{help-examples,outer-view,progress-view}.test.ts',
    '<rootDir>/test/evals/graders.test.ts',
    '<rootDir>/test/backends/kubernetes-manifests.test.ts',
    '<rootDir>/test/stack/validate.test.ts',
    '<rootDir>/test/suites/suite-metrics.test.ts',
    '<rootDir>/test/tasks/arithmetic-{files,users,demo}.test.ts',
    '<rootDir>/test/trainers/charlm-examples.test.ts',
  ],
  // The fault harness's own tests cut real PostgreSQL connections.
  testPathIgnorePatterns: [...base.testPathIgnorePatterns, '/test/unit/fault-harness\\.test\\.ts$'],
  globalSetup: '<rootDir>/test/setup/quick-setup.ts',
  maxWorkers: 2,
};
