// One campaign under a seeded fault schedule: a real `flywheel up` (Temporal dev server on SQLite, supervised
// workers) on a PostgreSQL the harness owns behind a TCP proxy, the loop on the local or Slurm backend, the feedback
// API under concurrent writes; each fault is injected at its moment and the time until the loop makes progress
// again is measured. Then every invariant is checked.
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { Pool } from 'pg';
import { openDb } from '../../db/client';
import { startFeedbackServer } from '../../server/feedback-server';
import { isAlive } from '../../stack/processes';
import { processesMentioning, spawnUp, stackEnv, type UpProcess } from '../stack/up-process';
import { startCampaign, type BackendKind, type LoopKind } from './fault-campaign';
import { startFaultPostgres } from './fault-postgres';
import { writeFeedback } from './feedback-hammer';
import { seededRandom, type FaultKind, type ScheduledFault } from './fault-schedule';
import { activeSlurmJobs, trainerPids } from './leftovers';
import { checkRun, type RunFacts } from './run-checks';

export interface FaultRunOptions {
  seed: number;
  schedule: ScheduledFault[];
  home: string;
  /** @default "inner" */
  loop?: LoopKind;
  /** @default "local" */
  backend?: BackendKind;
  /** Feedback events written concurrently (each sent 1–3 times) while faults land. @default 0 */
  feedbackEvents?: number;
  /** Experiments per inner loop. @default 4 */
  experiments?: number;
  log?: (line: string) => void;
}

export interface InjectedFault {
  kind: FaultKind;
  atMs: number;
  /** From the fault to the next row the loop writes (or its end); undefined when the fault found nothing to hit. */
  resumeMs?: number;
  skipped?: string;
}

export interface FaultRunReport {
  seed: number;
  faults: InjectedFault[];
  violations: string[];
  facts: RunFacts;
  /** From the loop's start to its end. */
  durationMs: number;
}

/** PostgreSQL down (killed) or unreachable (cut) this long. */
const PG_DOWN_MS = 2_000;

export async function runFaultCampaign(opts: FaultRunOptions): Promise<FaultRunReport> {
  const log = opts.log ?? (() => undefined);
  const backend = opts.backend ?? 'local';
  const rnd = seededRandom(opts.seed ^ 0xfa17);
  const pgServer = await startFaultPostgres(opts.home);
  let env = await stackEnv(opts.home, { DATABASE_URL: pgServer.url });
  const ups: UpProcess[] = [];
  const startUp = async (): Promise<UpProcess> => {
    const u = spawnUp(opts.home, env);
    ups.push(u);
    await u.waitFor(/^flywheel is up$/, { timeoutMs: 180_000 });
    u.state();
    return u;
  };
  /** The first start: a free port taken by another process between our probe and the bind gets new ports. */
  const firstUp = async (): Promise<UpProcess> => {
    for (let tries = 1; ; tries++) {
      try {
        return await startUp();
      } catch (e) {
        if (tries >= 3 || !/address already in use/.test((e as Error).message)) throw e;
        env = await stackEnv(opts.home, { DATABASE_URL: pgServer.url });
      }
    }
  };
  const violations: string[] = [];
  const faults: InjectedFault[] = [];
  let up: UpProcess | undefined;
  const pool = new Pool({ connectionString: pgServer.url, max: 3, connectionTimeoutMillis: 5_000 });
  pool.on('error', () => undefined);
  const feedbackDb = openDb(pgServer.url, { max: 8 });
  let connection: Connection | undefined;
  let feedback: Awaited<ReturnType<typeof startFeedbackServer>> | undefined;
  try {
    up = await firstUp();
    connection = await Connection.connect({ address: up.state()!.temporal.address });
    const client = new Client({ connection });
    feedback = await startFeedbackServer({ db: feedbackDb.db, port: 0 });
    const run = await startCampaign(env, opts.home, feedbackDb.db, { loop: opts.loop ?? 'inner', backend, seed: opts.seed, experiments: opts.experiments ?? 4 });
    const t0 = Date.now();
    let done = false;
    const finished = (async () => {
      for (;;) {
        try {
          await client.workflow.getHandle(run.workflowId).result();
          return;
        } catch (e) {
          if ((e as Error).name === 'WorkflowFailedError') throw e;
          await sleep(500); // the server is restarting
        }
      }
    })().finally(() => (done = true));

    const feedbackCampaign = `${run.campaignId}-api`;
    // The API refuses feedback for a campaign that does not exist: the hammer's campaign is registered, never run.
    await pool.query(`INSERT INTO campaigns (id, spec, spec_hash) VALUES ($1, '{}', 'feedback-api') ON CONFLICT DO NOTHING`, [feedbackCampaign]);
    const hammer = writeFeedback(feedback.url, feedbackCampaign, opts.feedbackEvents ?? 0, seededRandom(opts.seed ^ 0x5eed));
    for (const f of opts.schedule) {
      while (!done && Date.now() - t0 < f.atMs) await sleep(100);
      if (done) break;
      // Between experiments no trainer runs: wait a little for the next one rather than miss the kind.
      for (let i = 0; f.kind === 'trainer' && !trainerPids(opts.home).length && !done && i < 100; i++) await sleep(100);
      const before = await progress(pool);
      const at = Date.now();
      const skipped = await inject(f.kind, up);
      if (skipped) {
        faults.push({ kind: f.kind, atMs: at - t0, skipped });
        continue;
      }
      if (f.kind === 'temporal') up = await restartUp(up);
      while (!done && (await progress(pool)) <= before) await sleep(100);
      faults.push({ kind: f.kind, atMs: at - t0, resumeMs: Date.now() - at });
      log(`  fault ${f.kind} at ${((at - t0) / 1000).toFixed(1)} s: resumed after ${((Date.now() - at) / 1000).toFixed(1)} s`);
    }
    await finished;
    const durationMs = Date.now() - t0;
    const fb = await hammer;
    const checked = await checkRun(pool, client, run, backend, opts.home, { campaignId: feedbackCampaign, ...fb });
    violations.push(...checked.violations);
    return { seed: opts.seed, faults, violations, facts: checked.facts, durationMs };
  } finally {
    await feedback?.close();
    await feedbackDb.close().catch(() => undefined);
    await connection?.close().catch(() => undefined);
    await pool.end().catch(() => undefined);
    if (up) {
      up.child.kill('SIGINT');
      await Promise.race([up.exited, sleep(30_000)]);
    }
    for (const u of ups) u.killAll();
    await pgServer.stop();
    const orphans = processesMentioning(opts.home);
    if (orphans.length) violations.push(`${orphans.length} processes left after the stack stopped: ${orphans[0]}`);
    if (backend === 'slurm') for (const job of await activeSlurmJobs(opts.home)) violations.push(`Slurm job left after the stack stopped: ${job}`);
  }

  async function inject(kind: FaultKind, current: UpProcess): Promise<string | undefined> {
    const state = current.state()!;
    if (kind === 'worker') {
      const live = Object.entries(state.workers).filter(([, w]) => w?.pid && isAlive(w.pid));
      if (!live.length) return 'no live worker';
      process.kill(live[Math.floor(rnd() * live.length)][1]!.pid!, 'SIGKILL');
    } else if (kind === 'trainer') {
      const trainers = trainerPids(opts.home);
      if (!trainers.length) return 'no trainer running';
      process.kill(trainers[Math.floor(rnd() * trainers.length)], 'SIGKILL');
    } else if (kind === 'temporal') {
      if (!state.temporal.pid) return 'no temporal pid';
      process.kill(state.temporal.pid, 'SIGKILL');
    } else if (kind === 'postgres') {
      await pgServer.killAndRestart(PG_DOWN_MS);
    } else {
      await pgServer.proxy.cut(PG_DOWN_MS);
    }
    return undefined;
  }

  /** Temporal died: `up` ends the stack; a new `up` on the same home (same SQLite file). */
  async function restartUp(old: UpProcess): Promise<UpProcess> {
    await Promise.race([old.exited, sleep(30_000)]);
    old.killAll();
    return startUp();
  }
}

/** Rows the loops have written so far; -1 while PostgreSQL does not answer. */
async function progress(pool: Pool): Promise<number> {
  const tables = ['metric_points', 'eval_results', 'training_runs', 'critiques', 'examples', 'decisions', 'outer_iterations'];
  try {
    const r = await pool.query(`SELECT ${tables.map((t) => `(SELECT count(*) FROM ${t})`).join(' + ')} AS n`);
    return Number(r.rows[0].n);
  } catch {
    return -1;
  }
}
