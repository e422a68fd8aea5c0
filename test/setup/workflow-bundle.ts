// The workflow code bundled once per test run, for every worker and replay the tests start.
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

/** The bundler's logger for tests: errors only. */
export const QUIET_BUNDLER_LOGGER = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: console.error,
};

/** Bundles workflows/ into `dir`; returns the file (tests read it from FLYWHEEL_TEST_WORKFLOW_BUNDLE). */
export async function writeWorkflowBundle(dir: string): Promise<string> {
  const bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows'),
    logger: QUIET_BUNDLER_LOGGER,
  });
  const file = path.join(dir, 'workflow-bundle.js');
  fs.writeFileSync(file, bundle.code);
  return file;
}
