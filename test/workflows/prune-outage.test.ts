// A Temporal outage during a prune: the dev server is SIGKILLed while awaitTraining is killing a pruned trainer, so
// the pruning completion never reaches Temporal. After the restart the activity runs again and reattaches: it must
// report the prune (the verdict stored before the kill), not a job "cancelled outside Flywheel", and the experiment
// must not train a second run.
import fs from 'node:fs';
import path from 'node:path';
import { and, eq } from 'drizzle-orm';
import { Client, Connection } from '@temporalio/client';
import { experiments, trainingRuns } from '../../db/schema';
import { runDirOf } from '../../services/paths';
import { startTemporalDevServer, type TemporalDevServer } from '../../stack/temporal-dev-server';
import { freshDatabase, scratchDir } from '../helpers/env';
import { eventually } from '../helpers/loop-harness';
import { freePort } from '../helpers/ports';
import { fixtureSpec, uniqueName } from '../helpers/specs';
import { startTestWorkers, type TestWorkers } from '../helpers/workers';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { launchDirOf } from '../../backends/run-dir-files';

test('a Temporal restart while a pruned trainer is being killed: the run is recorded pruned and never relaunched', async () => {
  const { handle: db } = await freshDatabase('prune_outage');
  const home = scratchDir('prune-outage');
  const port = await freePort();
  const serverOpts = { home: path.join(home, 'temporal'), port, readyTimeoutMs: 120_000 };
  let temporal: TemporalDevServer = await startTemporalDevServer(serverOpts);
  const prefix = uniqueName('t-prune');
  let workers: TestWorkers = await startTestWorkers({ prefix, db: db.db, home, address: temporal.address });
  let connection: Connection | undefined;
  try {
    const id = uniqueName('prune');
    // e0 finishes first and best; e1's loss is worse by 1 at every step, so the median rule prunes it at step 3,
    // and its trainer takes 4 s to die on SIGTERM: the window in which Temporal goes down.
    const spec = fixtureSpec(
      id,
      { steps: 40, sleepMs: 4000, offsetPerIndex: 1, termGraceMs: 4000 },
      {
        budget: { experiments: 2, parallelism: 1 },
        batchSize: 1,
        plateau: { patience: 10 },
        pruning: { rule: 'median', warmupSteps: 3, minCompleted: 1, metric: 'loss' },
      },
    );
    connection = await Connection.connect({ address: temporal.address });
    const client = new Client({ connection });
    const loopId = `${id}/inner/1`;
    await client.workflow.start('innerLoop', {
      taskQueue: `${prefix}-orchestration`,
      workflowId: loopId,
      args: [{ campaignVersionId: (await registerCampaignVersion(db.db, spec)).versionId }],
    });
    const victim = `${loopId}/e1`;
    const runDir = runDirOf(home, `${victim}/r1`);
    // The local backend writes `cancelled` (in the run's launch directory) before its SIGTERM: the prune has begun.
    await eventually(
      'the prune of e1 to begin',
      async () => (fs.existsSync(path.join(launchDirOf(runDir), 'cancelled')) ? true : undefined),
      180_000,
    );
    await connection.close();
    connection = undefined;
    process.kill(-temporal.pid, 'SIGKILL');
    await temporal.exited;
    // The activity finishes its kill and records the prune while Temporal is down; its completion is lost with
    // the workers, which are replaced while the server is away.
    await eventually(
      'the pruned run recorded',
      async () => {
        const [r] = await db.db
          .select()
          .from(trainingRuns)
          .where(eq(trainingRuns.id, `${victim}/r1`));
        return r && r.status !== 'running' ? r : undefined;
      },
      60_000,
    );
    await workers.stop();
    temporal = await startTemporalDevServer(serverOpts);
    workers = await startTestWorkers({ prefix, db: db.db, home, address: temporal.address });
    connection = await Connection.connect({ address: temporal.address });
    const result = await new Client({ connection }).workflow.getHandle(loopId).result();
    expect(result.experiments).toBe(2);

    const runs = await db.db.select().from(trainingRuns).where(eq(trainingRuns.experimentId, victim));
    expect(runs.map((r) => [r.id, r.status])).toEqual([[`${victim}/r1`, 'pruned']]);
    expect(runs[0].launches).toBe(1);
    expect(runs[0].verdict).toMatchObject({ status: 'pruned', lastStep: expect.any(Number) });
    const [e1] = await db.db
      .select()
      .from(experiments)
      .where(and(eq(experiments.id, victim)));
    expect(e1.status).toBe('pruned');
    expect(fs.existsSync(runDirOf(home, `${victim}/r2`))).toBe(false);
  } finally {
    await connection?.close().catch(() => undefined);
    await workers.stop();
    await temporal.stop();
    await db.close();
  }
}, 420_000);
