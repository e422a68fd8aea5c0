// The local backend (detached process groups on the worker's host) against the shared backend conformance suite, and
// its end watch (backends/local/end-watch.ts).
import { LocalBackend } from '../../backends/local/local-backend';
import type { JobStatus } from '../../backends';
import { backendConformance, fixtureRun } from './conformance';

backendConformance({
  kind: 'local',
  make: () => new LocalBackend(),
  backendSpec: { kind: 'local' },
  // The local backend has no limit of its own: awaitTraining enforces the spec's trainingTimeoutSeconds.
  timeLimited: (spec) => ({ ...spec, innerLoop: { ...spec.innerLoop, trainingTimeoutSeconds: 3 } }),
  skip: { preemption: 'nothing preempts a local process; a crashed one is a failure, relaunched as a new attempt' },
});

test("watchEnd calls back as the launcher records the job's exit, and at once for a job that has already ended", async () => {
  const b = new LocalBackend();
  const h = await b.launch(fixtureRun('local', 'watch', { steps: 4, sleepMs: 400 }));
  expect((await b.status(h)).state).toBe('running');
  // Each call is checked: the exit file's creation may come before its text. Without a watch nothing calls: a timeout.
  const endedBy = (): Promise<JobStatus> =>
    new Promise((resolve) => {
      const stop = b.watchEnd(h, () => {
        void b.status(h).then((s) => {
          if (s.state === 'running') return;
          stop();
          resolve(s);
        });
      });
    });
  expect((await endedBy()).state).toBe('succeeded');
  expect((await endedBy()).state).toBe('succeeded');
}, 15_000);
