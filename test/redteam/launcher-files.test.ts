// Red team: the launcher reads nothing the trainer can forge, and every read of a trainer-written file is confined.
// Each case plants a trainer (a small sh script, run by the real LocalBackend with no sandbox around it, as `env -i`
// runs one where bubblewrap cannot) that attacks one file Flywheel reads, and follows it with awaitTraining as the
// training worker does. Every case must end with the run failed (for a limit, the limit named), copy the planted
// secret into no database row, count one launch, and never stall the worker's event loop. A FIFO the old code would
// block on is opened for writing after 5 s by a helper, so the stall ends and is measured instead of hanging the file.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { eq } from 'drizzle-orm';
import { PredictServers } from '../../activities/eval/predict-servers';
import { awaitTraining } from '../../activities/training/await-training';
import { trainerSetupOf } from '../../activities/training/trainer-isolation';
import type { ActivityDeps } from '../../activities/deps';
import type { JobHandle, LaunchRequest } from '../../backends';
import { LocalBackend } from '../../backends/local/local-backend';
import { groupMembers } from '../../backends/local/process-liveness';
import type { TrainingOutcome } from '../../contracts/training';
import { runIdOf } from '../../contracts/run-id';
import { parseSpec } from '../../tasks/task-spec';
import type { DbHandle } from '../../db/client';
import { checkpoints, metricPoints, trainingRuns } from '../../db/schema';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { freshDatabase, scratchDir } from '../helpers/env';
import { awaitInputOf, insertRunRows } from '../helpers/fake-run';
import { fixtureSpec, uniqueName } from '../helpers/specs';

const SECRET = 'postgres://flywheel:hunter2-redteam@127.0.0.1:54329/flywheel';
/** Small limits, so each limit case is over in seconds (the watcher first looks at a run once it is 1 s old). */
const LIMITS = { memoryMb: 160, processes: 48, openFiles: 256, diskMb: 4, files: 64, logMb: 1, predictSeconds: 60 };
/** The longest the worker's event loop may stall in any case (the FIFO helper ends a stall after 5 s). */
const MAX_STALL_MS = 2000;
/** A launcher-owned record lives beside the run dir (backends/run-dir-files.ts launchDirOf), written out here. */
const launchDir = (runDir: string) => `${runDir}.launch`;

let h: DbHandle;
let home: string;
let secretFile: string;
const backend = new LocalBackend({ killGraceMs: 1000 });
const leftovers: JobHandle[] = [];

beforeAll(async () => {
  ({ handle: h } = await freshDatabase('redteam_launcher_files'));
  home = scratchDir('redteam-launcher');
  // The worker's stack file: a credential outside every run dir, shaped so that it also parses as a metrics line.
  secretFile = path.join(home, 'stack.json');
  fs.writeFileSync(secretFile, `{"step": 1, "${SECRET}": 1}\n`);
});
afterAll(async () => {
  for (const handle of leftovers) await backend.cancel(handle).catch(() => undefined);
  await h?.close();
});

/** Makes a valid checkpoint and manifest, as an honest trainer does: the old code counted such a run as succeeded. */
const CHECKPOINT = [
  'mkdir -p checkpoints',
  'printf weights > checkpoints/step-1.ckpt',
  's=$(sha256sum checkpoints/step-1.ckpt | cut -d" " -f1)',
  `printf '{"checkpoints":[{"path":"checkpoints/step-1.ckpt","sha256":"%s","step":1,"format":"test"}]}' "$s" > checkpoints/manifest.json`,
].join('\n');
/** The valid checkpoint and one metrics line. */
const VALID_CHECKPOINT = `${CHECKPOINT}\necho '{"step":1,"loss":1.5}' >> metrics.jsonl`;

/** A manifest listing `p` with the sha256 of what it resolves to from the run dir (the attacker can compute it). */
const manifestOf = (p: string) =>
  [
    'mkdir -p checkpoints',
    `s=$(sha256sum ${p.startsWith('/') ? p : `"${p}"`} | cut -d" " -f1)`,
    `printf '{"checkpoints":[{"path":"%s","sha256":"%s","step":1,"format":"test"}]}' '${p}' "$s" > checkpoints/manifest.json`,
  ].join('\n');

interface Attack {
  outcome: TrainingOutcome;
  elapsedMs: number;
  stallMs: number;
  runDir: string;
  handle: JobHandle;
  run: typeof trainingRuns.$inferSelect;
  rows: string;
}

/**
 * Launches `script` (run by /bin/sh in its run dir; $SECRET_FILE names the secret) on the local backend with LIMITS and
 * follows it with awaitTraining, measuring the longest stall of the event loop; `fifo` is a path in the run dir that
 * a helper opens for writing after 5 s (a read blocked on it then ends).
 */
async function attack(
  label: string,
  script: string,
  opts: { fifo?: string; before?: (h: JobHandle, req: LaunchRequest) => Promise<void> } = {},
): Promise<Attack> {
  const name = uniqueName(`rt-${label}`);
  const { versionId: campaignVersionId } = await registerCampaignVersion(h.db, fixtureSpec(name, { steps: 1 }));
  const innerLoopId = `${name}/inner`;
  const experimentId = `${innerLoopId}/e1`;
  const runId = runIdOf(experimentId, 1);
  const runDir = path.join(home, 'runs', name);
  fs.mkdirSync(runDir, { recursive: true });
  const req = {
    runId,
    runDir,
    argv: ['/bin/sh', '-c', script],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', SECRET_FILE: secretFile, NODE: process.execPath },
    limits: LIMITS,
  } as LaunchRequest;
  const handle = await backend.launch(req);
  leftovers.push(handle);
  await insertRunRows(h.db, { campaignId: name, campaignVersionId, innerLoopId, experimentId, handle });
  await opts.before?.(handle, req);
  let unblock: ReturnType<typeof spawn> | undefined;
  if (opts.fifo) {
    const fifo = path.join(runDir, opts.fifo);
    // Opening a FIFO for writing waits for a reader: it frees a read the old code blocked on, and never runs otherwise.
    unblock = spawn('/bin/sh', ['-c', 'sleep 5; [ -p "$1" ] && : > "$1"', 'unblock', fifo], { stdio: 'ignore', detached: true });
  }
  const stalls = stallMeter();
  const began = Date.now();
  const input = awaitInputOf({ runId, experimentId, innerLoopId, handle }, { timeoutSeconds: 30 });
  const deps: ActivityDeps = { db: h.db, home, backendFor: () => backend };
  let outcome: TrainingOutcome;
  let stallMs: number;
  try {
    outcome = (await new MockActivityEnvironment({ heartbeatTimeoutMs: 60_000 }).run(awaitTraining, deps, input)) as TrainingOutcome;
  } finally {
    stallMs = stalls.stop();
    if (unblock?.pid) {
      try {
        process.kill(-unblock.pid, 'SIGKILL');
      } catch {
        /* done */
      }
    }
  }
  const elapsedMs = Date.now() - began;
  const [run] = await h.db.select().from(trainingRuns).where(eq(trainingRuns.id, runId));
  const points = await h.db.select().from(metricPoints).where(eq(metricPoints.runId, runId));
  const ckpts = await h.db.select().from(checkpoints).where(eq(checkpoints.runId, runId));
  return { outcome, elapsedMs, stallMs, runDir, handle, run, rows: JSON.stringify({ run, points, ckpts, outcome }) };
}

/** Measures the longest stall of this process's event loop (a blocked read shows as one) until stop(). */
function stallMeter(): { stop(): number } {
  let last = Date.now();
  let stallMs = 0;
  const tick = setInterval(() => {
    stallMs = Math.max(stallMs, Date.now() - last - 50);
    last = Date.now();
  }, 50);
  return {
    stop: () => {
      clearInterval(tick);
      return Math.max(stallMs, Date.now() - last - 50);
    },
  };
}

/** What every case must show: failed, one launch, no secret in a row, the worker never stalled, nothing left running. */
function expectContained(a: Attack, error?: RegExp): void {
  expect({ status: a.outcome.status, run: a.run.status }).toEqual({ status: 'failed', run: 'failed' });
  if (error) expect(a.outcome.error).toMatch(error);
  expect(a.run.launches).toBe(1);
  expect(a.rows).not.toContain(SECRET);
  expect(a.rows).not.toContain('hunter2');
  expect(a.stallMs).toBeLessThan(MAX_STALL_MS);
  expect(liveProcessesOf(a.handle)).toEqual([]);
}

/** Live (not zombie) processes still in the run's process group. */
const liveProcessesOf = (handle: JobHandle): number[] => groupMembers(Number(handle.ref));

describe('records the launcher relies on cannot be forged from the run dir', () => {
  test('an early exit_code, job.pid and launches.log: the run is followed to its real end, counted once', async () => {
    let relaunched: string | undefined;
    const a = await attack(
      'forged-records',
      [
        VALID_CHECKPOINT,
        'echo 0 > exit_code; echo 1 > job.pid; printf "1\\n2\\n3\\n" > launches.log; date +%s.%N > started_at; date +%s.%N > ended_at',
        'sleep 2; exit 7',
      ].join('\n'),
      {
        // A retried launch meanwhile must find the job it started, not the pid the trainer wrote.
        before: async (_handle, req) => {
          await new Promise((r) => setTimeout(r, 500));
          relaunched = (await backend.launch(req)).ref;
        },
      },
    );
    expect({ status: a.outcome.status, exitCode: a.outcome.exitCode, launches: a.run.launches, relaunched }).toEqual({
      status: 'failed',
      exitCode: 7,
      launches: 1,
      relaunched: a.handle.ref,
    });
    expectContained(a, /exited with code 7/);
    expect(a.elapsedMs).toBeGreaterThan(1500);
  });

  test('stderr.log symlinked to the secret: the tail is the trainer’s own stderr', async () => {
    const a = await attack(
      'stderr-link',
      'ln -sf "$SECRET_FILE" stderr.log; ln -sf "$SECRET_FILE" stdout.log; echo "my own error" >&2; exit 1',
    );
    expectContained(a, /exited with code 1/);
    expect(a.run.stderrTail).toBe('my own error');
  });
});

describe('what Flywheel reads from the run dir is confined', () => {
  test('metrics.jsonl symlinked to the secret: refused, the run failed', async () => {
    const a = await attack('metrics-link', `${CHECKPOINT}\nln -s "$SECRET_FILE" metrics.jsonl; exit 0`);
    expectContained(a, /broke the job contract: .*metrics\.jsonl: is a symbolic link/);
  });

  test('checkpoints/manifest.json symlinked to the secret: refused', async () => {
    const a = await attack('manifest-link', 'mkdir -p checkpoints; ln -s "$SECRET_FILE" checkpoints/manifest.json; exit 0');
    expectContained(a, /manifest\.json: is a symbolic link/);
  });

  test('metrics.jsonl a FIFO: refused without blocking the worker', async () => {
    const a = await attack('metrics-fifo', `${CHECKPOINT}\nmkfifo metrics.jsonl; exit 0`, { fifo: 'metrics.jsonl' });
    expectContained(a, /metrics\.jsonl: is a FIFO/);
  });

  test('the manifest a FIFO: refused without blocking the worker', async () => {
    const a = await attack('manifest-fifo', 'mkdir -p checkpoints; mkfifo checkpoints/manifest.json; exit 0', {
      fifo: 'checkpoints/manifest.json',
    });
    expectContained(a, /manifest\.json: is a FIFO/);
  });

  test('a checkpoint that is a FIFO: refused without blocking the worker', async () => {
    const a = await attack(
      'checkpoint-fifo',
      [
        'mkdir -p checkpoints; mkfifo checkpoints/step-1.ckpt',
        `printf '{"checkpoints":[{"path":"checkpoints/step-1.ckpt","sha256":"%s","step":1,"format":"test"}]}' "$(printf '' | sha256sum | cut -d" " -f1)" > checkpoints/manifest.json`,
        'exit 0',
      ].join('\n'),
      { fifo: 'checkpoints/step-1.ckpt' },
    );
    expectContained(a, /step-1\.ckpt: is a FIFO/);
  });

  test('a manifest path ../../../../etc/passwd (with its true sha256): a contract violation, never scored', async () => {
    const a = await attack('manifest-dotdot', `${manifestOf('../../../../../../../../../../etc/passwd')}\nexit 0`);
    expectContained(a, /leaves or re-enters its folder/);
  });

  test('an absolute manifest path: a contract violation', async () => {
    const a = await attack('manifest-absolute', `${manifestOf('/etc/passwd')}\nexit 0`);
    expectContained(a, /is absolute/);
  });

  test('a checkpoint symlinked to a file outside (with its true sha256): refused', async () => {
    const a = await attack(
      'checkpoint-link',
      `mkdir -p checkpoints; ln -s "$SECRET_FILE" checkpoints/step-1.ckpt\n${manifestOf('checkpoints/step-1.ckpt')}\nexit 0`,
    );
    expectContained(a, /step-1\.ckpt: is a symbolic link/);
  });
});

describe('resource limits end the run with the limit named', () => {
  test('100 MiB to stderr past logMb 1: the log is capped and the run ends on its log limit', async () => {
    const a = await attack('log', `${VALID_CHECKPOINT}\nhead -c 104857600 /dev/zero | tr '\\0' x >&2\nexit 0`);
    expectContained(a, /exceeded its log limit: stderr passed 1\.0 MiB/);
    expect(fs.statSync(path.join(launchDir(a.runDir), 'stderr.log')).size).toBeLessThanOrEqual(1024 * 1024 + 1);
  });

  test('a file past diskMb 4', async () => {
    const a = await attack('disk', `${VALID_CHECKPOINT}\nhead -c 8388608 /dev/zero > filler\nsleep 4; exit 0`);
    expectContained(a, /exceeded its disk limit: more than 4\.0 MiB in the run directory/);
  });

  test('more files than files 64', async () => {
    const a = await attack(
      'files',
      `${VALID_CHECKPOINT}\nmkdir many; i=0; while [ $i -lt 200 ]; do : > many/f$i; i=$((i+1)); done\nsleep 4; exit 0`,
    );
    expectContained(a, /exceeded its files limit: more than 64 files and folders/);
  });

  test('resident memory past memoryMb 160', async () => {
    const hog = `const a = []; for (let i = 0; i < 40; i++) a.push(Buffer.alloc(8 << 20, 1)); setTimeout(() => {}, 4000);`;
    const a = await attack('memory', `${VALID_CHECKPOINT}\n"$NODE" -e '${hog}'\nexit 0`);
    expectContained(a, /exceeded its memory limit: .* resident over \d+ processes, limit 160\.0 MiB/);
  });

  test('more processes than processes 48, some of them out of the process group (setsid)', async () => {
    const a = await attack(
      'processes',
      `${VALID_CHECKPOINT}\ni=0; while [ $i -lt 60 ]; do setsid sleep 4.01 & i=$((i+1)); done\nsleep 4; exit 0`,
    );
    expectContained(a, /exceeded its processes limit: \d+ processes and threads/);
    // The setsid'd sleeps left the group: they are the launcher's descendants, and they were killed too. (Their
    // `sleep 4.01` is this test's alone: another file running beside it may sleep 4.)
    expect(
      execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
        .split('\n')
        .filter((l) => l === 'sleep 4.01'),
    ).toEqual([]);
  });
});

describe("predict's own files are read confined too", () => {
  /**
   * A warm `predict --serve` server (the eval worker's) that answers each request with `act`, a line of JS run with
   * the request `r` in scope; unless `act` returns false it then replies ok. Sandboxed where the host can make one.
   */
  function server(label: string, act: string): ReturnType<typeof trainerSetupOf> {
    // Outside FLYWHEEL_HOME, which the sandbox hides: the server's own script, as a user's would be.
    const script = path.join(scratchDir('redteam-servers'), `${label}-server.js`);
    fs.writeFileSync(
      script,
      [
        "const fs = require('fs'); const { execFileSync, spawn } = require('child_process');",
        "require('readline').createInterface({ input: process.stdin }).on('line', (l) => {",
        '  const r = JSON.parse(l);',
        `  if ((() => { ${act} })() === false) return;`,
        "  process.stdout.write(JSON.stringify({ id: r.id, ok: true }) + '\\n');",
        '});',
      ].join('\n'),
    );
    const base = fixtureSpec(uniqueName(label), { steps: 1 });
    return trainerSetupOf(
      parseSpec({ ...base, trainer: { ...base.trainer, command: [process.execPath, script], warmPredict: true } }),
      home,
    );
  }
  const prompts = [{ id: 'p1', prompt: 'x', maxBytes: 4 }];
  let pool: PredictServers;
  let checkpoint: string;
  beforeAll(() => {
    checkpoint = path.join(home, 'runs', 'predict-ckpt', 'checkpoints', 'step-1.json');
    fs.mkdirSync(path.dirname(checkpoint), { recursive: true });
    fs.writeFileSync(checkpoint, '{}');
  });
  beforeEach(() => (pool = new PredictServers({ idleMs: 300 })));
  afterEach(() => pool.close());

  /** The request's failure and the longest stall of the event loop while it ran. */
  async function ask(setup: ReturnType<typeof trainerSetupOf>): Promise<{ error: string; stallMs: number }> {
    const stalls = stallMeter();
    let error = '(answered)';
    try {
      await pool.predict('redteam', setup, checkpoint, prompts, { timeoutMs: 15_000 });
    } catch (e) {
      error = (e as Error).message;
    }
    return { error, stallMs: stalls.stop() };
  }

  test('predictions symlinked to a file outside the scratch folder: refused', async () => {
    const r = await ask(server('pred-link', `fs.symlinkSync(${JSON.stringify(secretFile)}, r.out);`));
    expect(r.error).toMatch(/predictions\.jsonl: is a symbolic link|\.out\.jsonl: is a symbolic link/);
    expect(r.error).not.toContain('hunter2');
  });

  test('predictions a FIFO: refused without blocking the worker', async () => {
    // The server frees a reader blocked on its FIFO after 5 s (the old code's stall), then nothing waits on it.
    const r = await ask(
      server(
        'pred-fifo',
        `execFileSync('mkfifo', [r.out]); spawn('/bin/sh', ['-c', 'sleep 5; [ -p "$0" ] && : > "$0"', r.out], { detached: true, stdio: 'ignore' }).unref();`,
      ),
    );
    expect(r.error).toMatch(/is a FIFO, not a regular file/);
    expect(r.stallMs).toBeLessThan(MAX_STALL_MS);
  });

  test('a stdout line that never ends: the server is ended, not buffered without end', async () => {
    const r = await ask(server('pred-flood', "process.stdout.write('x'.repeat(3 << 20)); return false;"));
    expect(r.error).toMatch(/wrote a stdout line of more than 1048576 bytes/);
  });
});
