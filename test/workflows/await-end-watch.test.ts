// awaitTraining's end watch: a backend that can tell when its job ends (the local backend's inotify watch on the
// launcher's exit code, backends/local/end-watch.ts) wakes the follower at once, so a short run's end is not noticed
// only at the next poll; the poll stays for every backend and for a watch that fails. And a backend whose running job
// writes elsewhere than its run directory (a warm trainer's run: liveRunDir) is followed there while it runs.
import fs from 'node:fs';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { eq } from 'drizzle-orm';
import { awaitTraining } from '../../activities/training/await-training';
import type { ActivityDeps } from '../../activities/deps';
import type { JobStatus, TrainingBackend } from '../../backends';
import type { TrainingOutcome } from '../../contracts/training';
import type { DbHandle } from '../../db/client';
import { metricPoints } from '../../db/schema';
import { METRICS_FILE } from '../../core/contract-files';
import { freshDatabase, scratchDir } from '../helpers/env';
import { awaitInputOf, fakeBackend, insertFakeRun } from '../helpers/fake-run';
import { uniqueName } from '../helpers/specs';

let h: DbHandle;
const home = scratchDir('await-end-watch');

beforeAll(async () => {
  ({ handle: h } = await freshDatabase('await_end_watch'));
});
afterAll(() => h?.close());

const turn = () => new Promise((resolve) => setImmediate(resolve));

test("with the poll's timer frozen, the backend's end watch alone brings the follower to the job's end, and is stopped after", async () => {
  const name = uniqueName('watch');
  const run = await insertFakeRun(h.db, home, name, '{"step":1,"loss":5}\n', `job-${name}`);
  const { handle } = run;
  let ended = false;
  let checks = 0;
  let changed: (() => void) | undefined;
  const backend: TrainingBackend = {
    ...fakeBackend(handle, (): JobStatus => {
      checks++;
      return ended ? { state: 'failed', exitCode: 1 } : { state: 'running' };
    }),
    watchEnd: (_h, cb) => {
      changed = cb;
      return () => (changed = undefined);
    },
  };
  const deps: ActivityDeps = { db: h.db, home, backendFor: () => backend };
  const input = awaitInputOf(run);
  // The poll's sleep is a timer: frozen, it never ends, so only the watch can move the follower on.
  jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask', 'Date', 'hrtime', 'performance'] });
  try {
    const following = new MockActivityEnvironment().run(awaitTraining, deps, input) as Promise<TrainingOutcome>;
    while (checks < 1) await turn();
    for (let i = 0; i < 20; i++) await turn();
    expect(checks).toBe(1); // asleep on the frozen poll
    ended = true;
    changed?.(); // without a watch, nothing wakes the follower: the test times out
    const outcome = await following;
    expect(outcome.status).toBe('failed');
    expect(checks).toBe(2);
    expect(changed).toBeUndefined();
  } finally {
    jest.useRealTimers();
  }
}, 15_000);

test('while the end watch stands the poll only backs it up (250 ms at first); where none could be made it checks every 25 ms', async () => {
  for (const watching of [true, false]) {
    const name = uniqueName(watching ? 'slow-poll' : 'fast-poll');
    const run = await insertFakeRun(h.db, home, name, '{"step":1,"loss":5}\n', `job-${name}`);
    let checks = 0;
    const backend: TrainingBackend = {
      // The job ends at the third check: two naps between.
      ...fakeBackend(run.handle, (): JobStatus => (++checks >= 3 ? { state: 'failed', exitCode: 1 } : { state: 'running' })),
      // A watch that never calls (the end is seen by the poll), or none: the backend could not make one.
      watchEnd: () => (watching ? () => undefined : undefined),
    };
    const deps: ActivityDeps = { db: h.db, home, backendFor: () => backend };
    // The follower's naps are timers of the poll's delay; other timers (the pool's idle ones) are longer.
    const timeout = jest.spyOn(global, 'setTimeout');
    try {
      const outcome = (await new MockActivityEnvironment().run(awaitTraining, deps, awaitInputOf(run))) as TrainingOutcome;
      expect(outcome.status).toBe('failed');
      const naps = timeout.mock.calls.map(([, ms]) => ms).filter((ms) => ms === 25 || ms === 250);
      expect(naps).toEqual(watching ? [250, 250] : [25, 25]);
    } finally {
      timeout.mockRestore();
    }
  }
}, 15_000);

test("a running job's metrics are read where the backend says it writes them (a served run's server folder), then from its run directory at the same offsets", async () => {
  const name = uniqueName('live');
  const lines = '{"step":1,"loss":5}\n{"step":2,"loss":4}\n';
  const run = await insertFakeRun(h.db, home, name, '', `job-${name}`);
  const live = scratchDir('await-live');
  fs.writeFileSync(path.join(live, METRICS_FILE), lines);
  let ended = false;
  let checks = 0;
  const backend: TrainingBackend = {
    ...fakeBackend(run.handle, () => ({ state: 'running' })),
    status: async (): Promise<JobStatus> => {
      checks++;
      // The job ends once the follower has stored its live lines (or gives up: read from the run directory alone,
      // they never appear while it runs); at its end its outputs are in the run directory, one line more.
      const stored = await h.db.select().from(metricPoints).where(eq(metricPoints.runId, run.runId));
      if (stored.length >= 2 || checks > 40) {
        fs.writeFileSync(path.join(run.runDir, METRICS_FILE), lines + '{"step":3,"loss":3}\n');
        ended = true;
      }
      return ended ? { state: 'succeeded', exitCode: 0 } : { state: 'running' };
    },
    liveRunDir: () => (ended ? run.runDir : live),
  };
  const deps: ActivityDeps = { db: h.db, home, backendFor: () => backend };
  const outcome = (await new MockActivityEnvironment().run(awaitTraining, deps, awaitInputOf(run))) as TrainingOutcome;
  // It publishes no checkpoint, so the run fails at its end: what is looked at here is how its lines were read.
  expect(outcome.error).toMatch(/checkpoint|manifest/);
  expect(checks).toBeLessThanOrEqual(40);
  const points = await h.db.select().from(metricPoints).where(eq(metricPoints.runId, run.runId));
  expect(points.map((p) => p.step).sort()).toEqual([1, 2, 3]); // each line once: the offsets carried over
}, 30_000);
