// awaitTraining's end watch: a backend that can tell when its job ends (the local backend's inotify watch on the
// launcher's exit code, backends/local/end-watch.ts) wakes the follower at once, so a short run's end is not noticed
// only at the next poll; the poll stays for every backend and for a watch that fails.
import { MockActivityEnvironment } from '@temporalio/testing';
import { awaitTraining } from '../../activities/training/await-training';
import type { ActivityDeps } from '../../activities/deps';
import type { JobStatus, TrainingBackend } from '../../backends';
import type { TrainingOutcome } from '../../contracts/training';
import type { DbHandle } from '../../db/client';
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
