// The local backend (detached process groups on the worker's host) against the shared backend conformance suite, its
// end watch (backends/local/end-watch.ts), and a job whose launcher died under it.
import { LocalBackend } from '../../backends/local/local-backend';
import type { JobStatus } from '../../backends';
import { eventually } from '../helpers/loop-harness';
import { backendConformance, fixtureRun, jobEnded, processesOf, steps } from './conformance';

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
          stop?.();
          resolve(s);
        });
      });
    });
  expect((await endedBy()).state).toBe('succeeded');
  expect((await endedBy()).state).toBe('succeeded');
}, 15_000);

test('a job whose launcher was killed is lost only once nothing of it runs: its trainer writes no line after', async () => {
  const b = new LocalBackend({ killGraceMs: 1_000 });
  const req = fixtureRun('local', 'orphan', { steps: 600, sleepMs: 60_000 });
  const h = await b.launch(req);
  await eventually('the trainer to write', async () => (steps(req.runDir).length > 0 ? true : undefined), 30_000);
  // The launcher alone (the fault suite's trainer kill may pick it: its argv names the trainer's): no exit code comes.
  process.kill(Number(h.ref), 'SIGKILL');
  expect((await jobEnded(b, h, 30_000)).state).toBe('lost');
  // What the follower reads to the end once the job has ended is the whole file: the trainer is gone, not orphaned.
  expect(processesOf(req.runDir)).toEqual([]);
  const written = steps(req.runDir).length;
  await new Promise((r) => setTimeout(r, 500));
  expect(steps(req.runDir)).toHaveLength(written);
}, 60_000);
