// awaitTraining's heartbeats: none in an attempt's first second (the SDK sends the first one at once, and each is a
// round trip in which the server persists the activity: a short run paid it for nothing), then its progress (job ref,
// metrics offset) as before, for a retry to resume from.
import fs from 'node:fs';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { JobHandle, TrainingBackend } from '../../backends';
import { awaitTraining, QUIET_HEARTBEAT_MS } from '../../activities/training/await-training';
import type { ActivityDeps } from '../../activities/deps';
import { runIdOf } from '../../contracts/run-id';
import type { AwaitTrainingInput, TrainingOutcome } from '../../contracts/training';
import type { DbHandle } from '../../db/client';
import { experiments, trainingRuns } from '../../db/schema';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { freshDatabase, scratchDir } from '../helpers/env';
import { fixtureSpec, uniqueName } from '../helpers/specs';

let h: DbHandle;
const home = scratchDir('await-heartbeats');

beforeAll(async () => {
  ({ handle: h } = await freshDatabase('await_heartbeats'));
});
afterAll(() => h?.close());

/** awaitTraining on a fake job that runs `runMs` and then fails (no checkpoint to record); the heartbeats it sent. */
async function beatsFor(runMs: number): Promise<unknown[]> {
  const name = uniqueName('beats');
  const { versionId: campaignVersionId } = await registerCampaignVersion(h.db, fixtureSpec(name, { steps: 1 }));
  const experimentId = `${name}/inner/e1`;
  const runId = runIdOf(experimentId, 1);
  const runDir = path.join(home, name);
  fs.mkdirSync(runDir, { recursive: true });
  fs.writeFileSync(path.join(runDir, 'metrics.jsonl'), '{"step":1,"loss":5}\n');
  const handle: JobHandle = { backend: 'fake', runId, runDir, ref: `job-${name}` };
  await h.db.insert(experiments).values({
    id: experimentId,
    campaignId: name,
    campaignVersionId,
    innerLoopId: `${name}/inner`,
    index: 1,
    datasetVersionId: 'v',
    params: {},
    proposer: 'test',
    status: 'running',
  });
  await h.db.insert(trainingRuns).values({ id: runId, experimentId, attempt: 1, backend: 'fake', handle, runDir, status: 'running' });
  const ends = Date.now() + runMs;
  const backend: TrainingBackend = {
    kind: 'fake',
    launch: async () => handle,
    status: async () => (Date.now() < ends ? { state: 'running' } : { state: 'failed', exitCode: 1 }),
    cancel: async () => undefined,
    stderrTail: async () => '',
  };
  const deps: ActivityDeps = { db: h.db, home, backendFor: () => backend };
  const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 10_000 });
  const beats: unknown[] = [];
  env.on('heartbeat', (d: unknown) => beats.push(d));
  const input: AwaitTrainingInput = {
    runId,
    experimentId,
    innerLoopId: `${name}/inner`,
    handle,
    pruning: { rule: 'none', warmupSteps: 0, minCompleted: 1, metric: 'loss' },
    timeoutSeconds: 600,
  };
  const outcome = (await env.run(awaitTraining, deps, input)) as TrainingOutcome;
  expect(outcome.status).toBe('failed');
  return beats;
}

test('a run that ends within the first second sends no heartbeat', async () => {
  expect(await beatsFor(300)).toEqual([]);
});

test('a longer run heartbeats its job and metrics offset once the first second has passed', async () => {
  const beats = await beatsFor(QUIET_HEARTBEAT_MS + 600);
  expect(beats.length).toBeGreaterThan(0);
  expect(beats[0]).toEqual({ jobRef: expect.stringMatching(/^job-beats-/), metricsOffset: Buffer.byteLength('{"step":1,"loss":5}\n') });
});
