// awaitTraining's heartbeats: none in an attempt's first second (the SDK sends the first one at once, and each is a
// round trip in which the server persists the activity: a short run paid it for nothing), then its progress (job ref,
// metrics offset) as before, for a retry to resume from.
import { MockActivityEnvironment } from '@temporalio/testing';
import { awaitTraining, QUIET_HEARTBEAT_MS } from '../../activities/training/await-training';
import type { ActivityDeps } from '../../activities/deps';
import type { TrainingOutcome } from '../../contracts/training';
import type { DbHandle } from '../../db/client';
import { freshDatabase, scratchDir } from '../helpers/env';
import { awaitInputOf, fakeBackend, insertFakeRun } from '../helpers/fake-run';
import { uniqueName } from '../helpers/specs';

const METRICS = '{"step":1,"loss":5}\n';
let h: DbHandle;
const home = scratchDir('await-heartbeats');

beforeAll(async () => {
  ({ handle: h } = await freshDatabase('await_heartbeats'));
});
afterAll(() => h?.close());

/** awaitTraining on a fake job that runs `runMs` and then fails (no checkpoint to record); the heartbeats it sent. */
async function beatsFor(runMs: number): Promise<unknown[]> {
  const name = uniqueName('beats');
  const run = await insertFakeRun(h.db, home, name, METRICS, `job-${name}`);
  const { handle } = run;
  const ends = Date.now() + runMs;
  const backend = fakeBackend(handle, () => (Date.now() < ends ? { state: 'running' } : { state: 'failed', exitCode: 1 }));
  const deps: ActivityDeps = { db: h.db, home, backendFor: () => backend };
  const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 10_000 });
  const beats: unknown[] = [];
  env.on('heartbeat', (d: unknown) => beats.push(d));
  const input = awaitInputOf(run);
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
  expect(beats[0]).toEqual({ jobRef: expect.stringMatching(/^job-beats-/), metricsOffset: Buffer.byteLength(METRICS) });
});
