// One Temporal dev server and one PostgreSQL server per test run. Tests read their addresses from the
// environment (inherited by jest's workers) and each test file makes its own database on the server. First, what
// installs without root (test/setup/install-test-tools.ts); then which optional services are here.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { APP_ROLE, ensureAppRole, urlAsRole } from '../../db/app-role';
import { startEmbeddedPostgres } from '../../db/embedded-server';
import { startTemporalDevServer } from '../../stack/temporal-dev-server';
import { freePort } from '../helpers/ports';
import { SERVICES_ENV } from '../helpers/requires';
import { scrubCallerEnv } from './caller-env';
import { hfTestPython, temporalCli, timeSkippingServer, toolsHome, torchPythons } from './install-test-tools';
import { ALL_SERVICES, probeServices } from './probe-services';
import { writeWorkflowBundle } from './workflow-bundle';

export default async function globalSetup(): Promise<void> {
  scrubCallerEnv();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'flywheel-test-'));
  fs.chmodSync(scratch, 0o755); // the embedded PostgreSQL runs as the `postgres` user when we are root
  const g = globalThis as Record<string, unknown>;
  g.__flywheelScratch = scratch;

  const home = toolsHome();
  // The dev server below, the helpers and every `flywheel up` a test starts (each on a home of its own) use this CLI.
  process.env.TEMPORAL_CLI_PATH = temporalCli(home);
  const testServer = timeSkippingServer(home);
  const pythons = torchPythons(home);
  const hf = hfTestPython(home);

  // Started here rather than by @temporalio/testing, whose fixed 5 s start-up wait is too short on a loaded
  // 2-core machine (a CI run failed on it while Ray's head was still warming up): we wait up to 2 minutes.
  const temporal = await startTemporalDevServer({ home: scratch, port: await freePort(), dbFile: 'memory', readyTimeoutMs: 120_000 });
  g.__flywheelTemporal = temporal;
  process.env.FLYWHEEL_TEST_TEMPORAL_ADDRESS = temporal.address;

  if (process.env.DATABASE_URL) {
    process.env.FLYWHEEL_TEST_PG_URL = process.env.DATABASE_URL;
  } else {
    const pg = await startEmbeddedPostgres({ dataDir: path.join(scratch, 'pg'), port: await freePort() });
    g.__flywheelPg = pg;
    // The superuser makes and migrates each test file's database; the tests then use it as the application role,
    // as `flywheel up`'s workers do (test/helpers/env.ts freshDatabase).
    process.env.FLYWHEEL_TEST_PG_URL = pg.adminUrl;
    process.env.FLYWHEEL_TEST_PG_APP_URL = urlAsRole(pg.adminUrl, APP_ROLE, await ensureAppRole(pg.adminUrl));
  }

  process.env.FLYWHEEL_TEST_WORKFLOW_BUNDLE = await writeWorkflowBundle(scratch);
  process.env.FLYWHEEL_TEST_SCRATCH = scratch;
  process.env[SERVICES_ENV] = JSON.stringify(await probeServices(ALL_SERVICES, { pythons, testServer, hfPython: hf }));
}
