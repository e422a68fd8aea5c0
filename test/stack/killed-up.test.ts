// A `flywheel up` killed with SIGKILL cannot stop its children: its workers notice and exit on their own, and the
// next `flywheel up` on the same home stops the Temporal and PostgreSQL it left, then starts normally.
import { scratchDir } from '../helpers/env';
import { waitForExit } from '../../stack/processes';
import { livePids, processesMentioning, spawnUp, stackEnv, type UpProcess } from './up-process';

const started: UpProcess[] = [];
afterAll(() => started.forEach((u) => u.killAll()));

it('cleans up after a SIGKILLed flywheel up', async () => {
  const home = scratchDir('stack-killed');
  const env = await stackEnv(home);
  const first = spawnUp(home, env);
  started.push(first);
  await first.waitFor(/^flywheel is up$/, { timeoutMs: 180_000 });
  const state = first.state()!;
  first.child.kill('SIGKILL');
  await first.exited;

  // The workers see their IPC channel close and drain.
  for (const w of Object.values(state.workers)) expect(await waitForExit(w!.pid, 30_000)).toBe(true);

  const second = spawnUp(home, env);
  started.push(second);
  await second.waitFor(/^! stopped temporal \(pid \d+\) left by a killed flywheel up$/, { timeoutMs: 60_000 });
  await second.waitFor(/^! stopped postgres \(pid \d+\) left by a killed flywheel up$/, { timeoutMs: 60_000 });
  await second.waitFor(/^flywheel is up$/, { timeoutMs: 180_000 });
  expect(livePids([state.temporal.pid!, state.postgres.pid!])).toEqual([]);

  second.state();
  const pids = [...second.pids];
  second.child.kill('SIGINT');
  expect(await second.exited).toEqual({ code: 0, signal: null });
  expect(livePids(pids)).toEqual([]);
  expect(processesMentioning(home)).toEqual([]);
}, 360_000);
