// The local backend starts its launchers through the worker's spawn helper (backends/local/spawn-server.ts), never by
// forking the worker: the launcher is the helper's child, the helper holds no environment of its own, a killed helper
// is replaced without a second process for any run (the launch lock and the pid file decide, not the helper), and the
// helper exits when its worker dies while the trainers it started keep running for a new worker to reattach to.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { JobHandle, LaunchRequest } from '../../backends';
import { LauncherNotStartedError, LocalBackend } from '../../backends/local/local-backend';
import { groupMembers, isAlive } from '../../backends/local/process-liveness';
import { SpawnServer } from '../../backends/local/spawn-server';
import { launchDirOf } from '../../backends/run-dir-files';
import { LAUNCH_LOCK, LAUNCHES_LOG } from '../../core/contract-files';
import { scratchDir } from '../helpers/env';
import { eventually } from '../helpers/loop-harness';

const REPO = path.join(__dirname, '..', '..');
const root = scratchDir('spawn-server');
const started: Array<{ backend: LocalBackend; handle: JobHandle }> = [];
const servers: SpawnServer[] = [];
const workers: ChildProcess[] = [];

afterAll(async () => {
  for (const w of workers) w.kill('SIGKILL');
  for (const { backend, handle } of started) await backend.cancel(handle).catch(() => undefined);
  for (const s of servers) s.stop();
});

/** A run whose trainer sleeps until cancelled. */
function sleeper(label: string): LaunchRequest {
  const runDir = path.join(root, label);
  return { runId: `spawn-server/${label}`, runDir, argv: ['/bin/sleep', '300'] };
}

function backendWith(server: SpawnServer, opts: { pidWaitMs?: number } = {}): LocalBackend {
  servers.push(server);
  return new LocalBackend({ spawner: server, killGraceMs: 500, ...opts });
}

async function launch(backend: LocalBackend, req: LaunchRequest): Promise<JobHandle> {
  const handle = await backend.launch(req);
  started.push({ backend, handle });
  return handle;
}

const launches = (req: LaunchRequest) =>
  fs
    .readFileSync(path.join(launchDirOf(req.runDir), LAUNCHES_LOG), 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean);
const parentOf = (pid: number): number => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
};
const gone = (pid: number) => eventually(`pid ${pid} to exit`, async () => (isAlive(pid) ? undefined : true), 10_000);

test('a launch is started by the spawn helper, which holds no environment of its own', async () => {
  const server = new SpawnServer();
  const backend = backendWith(server);
  const req = { ...sleeper('through-helper'), env: { PATH: '/usr/bin:/bin', JOB_ONLY: 'yes' } };
  const h = await launch(backend, req);
  const helper = server.pid!;
  expect(helper).toBeGreaterThan(0);
  // The launcher is the helper's child, not this process's: the worker did not fork.
  expect(parentOf(Number(h.ref))).toBe(helper);
  expect(parentOf(helper)).toBe(process.pid);
  expect(fs.readFileSync(`/proc/${helper}/environ`, 'utf8')).toBe('');
  // The launcher has the job's environment and nothing else.
  expect(fs.readFileSync(`/proc/${h.ref}/environ`, 'utf8').split('\0').filter(Boolean).sort()).toEqual([
    'JOB_ONLY=yes',
    'PATH=/usr/bin:/bin',
  ]);
  // One helper serves every launch of this process.
  const h2 = await launch(backend, sleeper('through-helper-2'));
  expect(parentOf(Number(h2.ref))).toBe(helper);
  expect(server.pid).toBe(helper);
});

test('a killed helper is replaced, and no run gets a second process', async () => {
  const server = new SpawnServer();
  const backend = backendWith(server, { pidWaitMs: 1000 });
  const a = sleeper('killed-helper-a');
  const ha = await launch(backend, a);
  const first = server.pid!;
  process.kill(first, 'SIGKILL');
  await gone(first);
  // Dead is not yet noticed: until Node reaps the helper ('close'), a launch still goes to it and fails retryably (as
  // with a request in flight, below). The replacement is what this part checks, so wait for the notice.
  await eventually('the helper noticed gone', async () => (server.pid === undefined ? true : undefined), 10_000);
  // Its launcher runs on, and launching the same run again finds it.
  expect(await backend.status(ha)).toEqual({ state: 'running' });
  expect((await launch(backend, a)).ref).toBe(ha.ref);
  expect(launches(a)).toHaveLength(1);
  // The next launch starts a new helper.
  const hb = await launch(backend, sleeper('killed-helper-b'));
  const second = server.pid!;
  expect(second).not.toBe(first);
  expect(parentOf(Number(hb.ref))).toBe(second);

  // A helper that dies with a request in flight (stopped, so it never read it): the launch fails, retryably, and
  // names the helper; the retry waits out the lock, then starts the run once.
  const c = sleeper('killed-helper-c');
  process.kill(second, 'SIGSTOP');
  const inFlight = backend.launch(c);
  await eventually('the launch lock', async () => (fs.existsSync(path.join(launchDirOf(c.runDir), LAUNCH_LOCK)) ? true : undefined), 5000);
  process.kill(second, 'SIGKILL');
  const err = await inFlight.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LauncherNotStartedError);
  expect((err as LauncherNotStartedError).retryable).toBe(true);
  expect((err as Error).message).toMatch(/spawn helper \(pid \d+\) exited \(SIGKILL\) before it answered/);
  const hc = await launch(backend, c);
  expect(launches(c)).toEqual([hc.ref]);
  expect(groupMembers(Number(hc.ref)).length).toBeGreaterThan(0);
  expect(parentOf(Number(hc.ref))).toBe(server.pid);
});

test('the helper exits when its worker is killed; the trainer runs on and a new worker reattaches', async () => {
  const req = sleeper('worker-killed');
  // A worker of its own: launches one run through its shared helper, says who is who, and waits to be killed.
  const code = `
    const { LocalBackend } = require(${JSON.stringify(path.join(REPO, 'backends/local/local-backend.ts'))});
    const { sharedSpawnServer } = require(${JSON.stringify(path.join(REPO, 'backends/local/spawn-server.ts'))});
    new LocalBackend().launch(${JSON.stringify(req)}).then((h) => {
      console.log(JSON.stringify({ handle: h, helper: sharedSpawnServer().pid }));
      setInterval(() => undefined, 1000);
    });`;
  const worker = spawn(process.execPath, ['-r', 'tsx/cjs', '-e', code], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
  workers.push(worker);
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    worker.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0]);
    });
    worker.on('exit', (c) => reject(new Error(`the worker exited (${c}) before it launched`)));
  });
  const { handle, helper } = JSON.parse(line) as { handle: JobHandle; helper: number };
  const backend = new LocalBackend({ killGraceMs: 500 });
  started.push({ backend, handle });
  expect(isAlive(helper)).toBe(true);
  expect(parentOf(Number(handle.ref))).toBe(helper);

  worker.kill('SIGKILL');
  await gone(helper);
  expect(isAlive(Number(handle.ref))).toBe(true);
  expect(await backend.status(handle)).toEqual({ state: 'running' });
  expect((await backend.launch(req)).ref).toBe(handle.ref);
  expect(launches(req)).toHaveLength(1);
});
