// A prune's completion lost after its last heartbeat got through: the attempt that reattaches starts reading the
// metrics past the pruned point and finds the job gone, killed with the scheduler's "cancelled" reason. Only the
// verdict stored before the kill (services/training-runs.ts) tells it the truth; without it the run reads as
// "cancelled outside Flywheel", fails, and the experiment trains it again. (test/workflows/prune-outage.test.ts runs
// the outage on the real stack, where the re-read usually finds the pruned point again; this pins the other case.)
import { MockActivityEnvironment } from '@temporalio/testing';
import { eq } from 'drizzle-orm';
import { awaitTraining } from '../../activities/training/await-training';
import { decideRun } from '../../services/training-runs';
import type { ActivityDeps } from '../../activities/deps';
import type { DbHandle } from '../../db/client';
import { trainingRuns } from '../../db/schema';
import { freshDatabase, scratchDir } from '../helpers/env';
import { awaitInputOf, fakeBackend, insertFakeRun } from '../helpers/fake-run';
import { uniqueName } from '../helpers/specs';

let h: DbHandle;
const home = scratchDir('verdict-reattach');

beforeAll(async () => {
  ({ handle: h } = await freshDatabase('verdict_reattach'));
});
afterAll(() => h?.close());

test('a reattaching awaitTraining past the pruned point reports the stored prune, not a cancel from outside', async () => {
  const name = uniqueName('verdict');
  const metrics =
    ['{"step":1,"name":"loss","value":5}', '{"step":2,"name":"loss","value":5}', '{"step":3,"name":"loss","value":5}'].join('\n') + '\n';
  const fake = await insertFakeRun(h.db, home, name, metrics);
  const { runId, handle } = fake;
  // The first attempt judged step 3, stored its verdict, and killed the job; its completion never reached Temporal.
  await decideRun(h.db, runId, {
    status: 'pruned',
    lastStep: 3,
    error: 'pruned at step 3: loss 5.0000 > median 2.0000 of 1 finished runs of earlier batches',
  });

  // What the local backend reports for a job Flywheel killed: ended, by a cancel.
  const backend = fakeBackend(handle, () => ({ state: 'failed', reason: 'cancelled' }));
  const deps: ActivityDeps = { db: h.db, home, backendFor: () => backend };
  const input = awaitInputOf(fake, { pruning: { rule: 'median', warmupSteps: 1, minCompleted: 1, metric: 'loss' } });
  // The retry's heartbeat details: the last one that reached Temporal, already past every metric line.
  const env = new MockActivityEnvironment({ attempt: 2, heartbeatDetails: { jobRef: 'job-1', metricsOffset: Buffer.byteLength(metrics) } });
  const outcome = await env.run(awaitTraining, deps, input);

  expect(outcome).toMatchObject({ runId, status: 'pruned', lastStep: 3 });
  const [run] = await h.db.select().from(trainingRuns).where(eq(trainingRuns.id, runId));
  expect(run.status).toBe('pruned');
});
