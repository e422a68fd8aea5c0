// The global set-ups' scrub of the caller's shell (test/setup/caller-env.ts): what would reach the stacks and
// processes the tests start goes, the suite's own settings and DATABASE_URL stay.
import { scrubCallerEnv } from '../../test/setup/caller-env';

test('removes FLYWHEEL_* and Temporal connection settings, keeps the suite settings', () => {
  const env: NodeJS.ProcessEnv = {
    PATH: '/usr/bin',
    DATABASE_URL: 'postgres://x',
    TEMPORAL_CLI_PATH: '/bin/temporal',
    TEMPORAL_ADDRESS: 'elsewhere:7233',
    TEMPORAL_NAMESPACE: 'prod',
    TEMPORAL_TLS_CERT: '/c.pem',
    FLYWHEEL_TASK_QUEUE_PREFIX: 'x',
    FLYWHEEL_PG_PORT: '5555',
    FLYWHEEL_TEST_PG_APP_URL: 'postgres://stale',
    FLYWHEEL_HOME: '/work/.flywheel',
    FLYWHEEL_REQUIRE_ALL: '1',
    FLYWHEEL_TEST_ABSENT: 'slurm',
  };
  expect(scrubCallerEnv(env).sort()).toEqual([
    'FLYWHEEL_PG_PORT',
    'FLYWHEEL_TASK_QUEUE_PREFIX',
    'FLYWHEEL_TEST_PG_APP_URL',
    'TEMPORAL_ADDRESS',
    'TEMPORAL_NAMESPACE',
    'TEMPORAL_TLS_CERT',
  ]);
  expect(env).toEqual({
    PATH: '/usr/bin',
    DATABASE_URL: 'postgres://x',
    TEMPORAL_CLI_PATH: '/bin/temporal',
    FLYWHEEL_HOME: '/work/.flywheel',
    FLYWHEEL_REQUIRE_ALL: '1',
    FLYWHEEL_TEST_ABSENT: 'slurm',
  });
});

test('the set-up already ran it: no caller variable reaches this test', () => {
  expect(Object.keys(process.env).filter((k) => k === 'FLYWHEEL_TASK_QUEUE_PREFIX' || k === 'TEMPORAL_ADDRESS')).toEqual([]);
});
