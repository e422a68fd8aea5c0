// A worker killed with SIGKILL under `flywheel up`: Temporal and PostgreSQL keep serving, the other workers keep
// running, and the restarted worker (a new pid) polls its queue again.
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Client as PgClient } from 'pg';
import { scratchDir } from '../helpers/env';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAlive } from '../../stack/processes';
import { spawnUp, stackEnv, type UpProcess } from './up-process';

const ACTIVITY = temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY;

let up: UpProcess | undefined;
afterAll(() => up?.killAll());

/** Polls until a worker process with `pid` is among the queue's activity pollers (identity `family@host:pid`). */
async function waitForPoller(connection: Connection, queue: string, pid: number, timeoutMs = 60_000): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await connection.workflowService.describeTaskQueue({
      namespace: 'default',
      taskQueue: { name: queue },
      taskQueueType: ACTIVITY,
    });
    const identities = (r.pollers ?? []).map((p) => p.identity ?? '');
    if (identities.some((i) => i.endsWith(`:${pid}`))) return identities;
    if (Date.now() > deadline) throw new Error(`no poller from pid ${pid} on ${queue}: ${identities.join(', ')}`);
    await sleep(250);
  }
}

it('restarts a SIGKILLed worker while Temporal and PostgreSQL keep serving', async () => {
  const home = scratchDir('stack-worker-restart');
  up = spawnUp(home, await stackEnv(home));
  await up.waitFor(/^flywheel is up$/, { timeoutMs: 180_000 });
  const state = up.state()!;
  const connection = await Connection.connect({ address: state.temporal.address });
  const pg = new PgClient({ connectionString: state.postgres.url });
  await pg.connect();
  try {
    const killed = state.workers.training!.pid;
    await waitForPoller(connection, 'flywheel-training', killed);
    const pgStarted = (await pg.query('SELECT pg_postmaster_start_time()::text AS t')).rows[0].t as string;
    const mark = up.lines.length;
    process.kill(killed, 'SIGKILL');

    await up.waitFor(/^↻ worker training exited \(SIGKILL\); restarting in/, { after: mark, timeoutMs: 10_000 });
    // While the worker is down, the servers answer, the same processes as before (neither was restarted), and the
    // other workers are untouched.
    expect((await connection.workflowService.getSystemInfo({})).serverVersion).toBeTruthy();
    expect(up.state()!.temporal.pid).toBe(state.temporal.pid);
    expect(isAlive(state.temporal.pid!)).toBe(true);
    expect((await pg.query('SELECT pg_postmaster_start_time()::text AS t')).rows[0].t).toBe(pgStarted);
    expect(up.state()!.postgres.pid).toBe(state.postgres.pid);
    expect(isAlive(state.workers.orchestration!.pid) && isAlive(state.workers.eval!.pid)).toBe(true);
    expect([up.state()!.workers.orchestration!.pid, up.state()!.workers.eval!.pid]).toEqual([
      state.workers.orchestration!.pid,
      state.workers.eval!.pid,
    ]);

    const i = await up.waitFor(/^✓ worker training  queue flywheel-training \(pid \d+, restart 1\)$/, { after: mark, timeoutMs: 90_000 });
    const restarted = Number(/pid (\d+)/.exec(up.lines[i])![1]);
    expect(restarted).not.toBe(killed);
    expect(up.state()!.workers.training!.pid).toBe(restarted);
    await waitForPoller(connection, 'flywheel-training', restarted);
  } finally {
    await pg.end();
    await connection.close();
  }
  up.child.kill('SIGINT');
  expect(await up.exited).toEqual({ code: 0, signal: null });
}, 300_000);
