// The training backend and the clock reach the activities through their deps, like the database: here awaitTraining
// follows a job on a fake backend that never ends, and the time limit passes on a clock an hour ahead, not in real time.
import { MockActivityEnvironment } from '@temporalio/testing';
import { eq } from 'drizzle-orm';
import type { JobHandle, TrainingBackend } from '../../backends';
import { awaitTraining } from '../../activities/training/await-training';
import type { ActivityDeps } from '../../activities/deps';
import { runIdOf } from '../../contracts/run-id';
import type { AwaitTrainingInput } from '../../contracts/training';
import type { DbHandle } from '../../db/client';
import { experiments, trainingRuns } from '../../db/schema';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { freshDatabase, scratchDir } from '../helpers/env';
import { fixtureSpec, uniqueName } from '../helpers/specs';

let h: DbHandle;
const home = scratchDir('injected-deps');

beforeAll(async () => {
  ({ handle: h } = await freshDatabase('injected_deps'));
});
afterAll(() => h?.close());

test('awaitTraining stops a job past its time limit by the injected clock, on the injected backend', async () => {
  const name = uniqueName('clock');
  const { versionId: campaignVersionId } = await registerCampaignVersion(h.db, fixtureSpec(name, { steps: 1 }));
  const experimentId = `${name}/e0`;
  const runId = runIdOf(experimentId, 1);
  const handle: JobHandle = { backend: 'fake', runId, runDir: `${home}/${name}`, ref: 'job-1' };
  await h.db.insert(experiments).values({
    id: experimentId,
    campaignId: name,
    campaignVersionId,
    innerLoopId: `${name}/inner`,
    index: 0,
    datasetVersionId: 'v',
    params: {},
    proposer: 'test',
    status: 'running',
  });
  await h.db
    .insert(trainingRuns)
    .values({ id: runId, experimentId, attempt: 1, backend: 'fake', handle, runDir: handle.runDir, status: 'running' });

  const cancelled: string[] = [];
  const asked: string[] = [];
  const backend: TrainingBackend = {
    kind: 'fake',
    launch: async () => handle,
    status: async () => ({ state: 'running' }),
    cancel: async (j) => void cancelled.push(j.ref),
    stderrTail: async () => '',
  };
  const anHourOn = Date.now() + 3_600_000;
  const deps: ActivityDeps = { db: h.db, home, clock: { now: () => anHourOn }, backendFor: (kind) => (asked.push(kind), backend) };

  const input: AwaitTrainingInput = {
    runId,
    experimentId,
    innerLoopId: `${name}/inner`,
    handle,
    pruning: { rule: 'none', warmupSteps: 0, minCompleted: 0, metric: 'loss' },
    timeoutSeconds: 600,
  };
  const outcome = await new MockActivityEnvironment().run(awaitTraining, deps, input);

  expect(outcome).toMatchObject({ runId, status: 'timed_out', error: 'exceeded 600s' });
  expect(asked).toEqual(['fake']);
  expect(cancelled).toEqual(['job-1']);
  const [run] = await h.db.select().from(trainingRuns).where(eq(trainingRuns.id, runId));
  expect(run.status).toBe('timed_out');
  expect(run.endedAt?.getTime()).toBe(anHourOn);
});
