// The quick tier's set-up (jest.quick.config.js): no dev server and no PostgreSQL, only the workflow bundle, the
// time-skipping test server that workflow tests over stub activities start for themselves, and whether bubblewrap
// can make the sandbox the test-program grader runs in.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SERVICES_ENV } from '../helpers/requires';
import { scrubCallerEnv } from './caller-env';
import { timeSkippingServer, toolsHome } from './install-test-tools';
import { probeServices } from './probe-services';
import { writeWorkflowBundle } from './workflow-bundle';

export default async function quickSetup(): Promise<void> {
  scrubCallerEnv();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'flywheel-quick-'));
  (globalThis as Record<string, unknown>).__flywheelScratch = scratch;
  const testServer = timeSkippingServer(toolsHome());
  process.env[SERVICES_ENV] = JSON.stringify(
    await probeServices(['temporal-test-server', 'bubblewrap'], { pythons: [], testServer, hfPython: undefined }),
  );
  process.env.FLYWHEEL_TEST_WORKFLOW_BUNDLE = await writeWorkflowBundle(scratch);
  process.env.FLYWHEEL_TEST_SCRATCH = scratch;
}
