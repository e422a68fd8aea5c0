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
import { DEFAULT_EXPERIMENTS, startCampaign, type BackendKind, type LoopKind } from './fault-campaign';
import { startFaultPostgres } from './fault-postgres';
import { writeFeedback } from './feedback-hammer';
import { seededRandom, type FaultKind, type ScheduledFault } from './fault-schedule';
import { activeSlurmJobs, trainerPids } from './leftovers';
import { ExperimentHistories } from './experiment-histories';
import { awaitTrainingAttempts, describeHit, PRUNE_WAIT_MS, pruneHit, waitForPrune, type PruneHit } from './prune-window';
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
  /** Experiments per inner loop. @default DEFAULT_EXPERIMENTS[loop] (6 inner, 4 outer) */
  experiments?: number;
  /** Experiments as coroutines of their loop's workflow (innerLoop.experimentWorkflows: inline). @default false */
  inline?: boolean;
  /** Runs served by warm trainers (trainer.warmTrain). @default false */
  warmTrain?: boolean;
  log?: (line: string) => void;
}

export interface InjectedFault {
  kind: FaultKind;
  atMs: number;
  /** From the fault to the next row the loop writes (or its end); undefined when the fault found nothing to hit. */
  resumeMs?: number;
  skipped?: string;
  /** `temporal-prune`: the prune it aimed at, and whether it hit it. */
  prune?: PruneHit;
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
  const loop = opts.loop ?? 'inner';
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
    const run = await startCampaign(env, opts.home, feedbackDb.db, {
      loop,
      backend,
      seed: opts.seed,
      experiments: opts.experiments ?? DEFAULT_EXPERIMENTS[loop],
      inline: opts.inline,
      warmTrain: opts.warmTrain,
    });
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
    await pool.query(`INSERT INTO campaigns (id, spec, spec_hash) VALUES ($1, '{}', 'feedback-api') ON CONFLICT DO NOTHING`, [
      feedbackCampaign,
    ]);
    const hammer = writeFeedback(feedback.url, feedbackCampaign, opts.feedbackEvents ?? 0, seededRandom(opts.seed ^ 0x5eed));
    for (const f of opts.schedule) {
      while (!done && Date.now() - t0 < f.atMs) await sleep(100);
      if (done) break;
      // Between experiments no trainer runs: wait a little for the next one rather than miss the kind.
      for (let i = 0; f.kind === 'trainer' && !trainerPids(opts.home).length && !done && i < 100; i++) await sleep(100);
      // The Temporal kill timed to a prune: its moment is when the next prune begins, within PRUNE_WAIT_MS.
      const pruning = f.kind === 'temporal-prune' ? await waitForPrune(pool, PRUNE_WAIT_MS, () => done) : undefined;
      if (f.kind === 'temporal-prune' && !pruning) {
        faults.push({
          kind: f.kind,
          atMs: Date.now() - t0,
          skipped: done ? 'the loop ended before a prune began' : `no prune began within ${PRUNE_WAIT_MS / 1000} s`,
        });
        continue;
      }
      let before = await progress(pool);
      const at = Date.now();
      const skipped = await inject(f.kind, up);
      if (skipped) {
        faults.push({ kind: f.kind, atMs: at - t0, skipped });
        continue;
      }
      const prune = pruning ? await pruneHit(pool, pruning, at) : undefined;
      if (f.kind === 'temporal' || f.kind === 'temporal-prune') {
        await stopStack(up);
        // Rows the old workers wrote while Temporal was down (an activity finishing its step) are no resumption.
        before = await progress(pool);
        up = await startUp();
      }
      while (!done && (await progress(pool)) <= before) await sleep(100);
      faults.push({ kind: f.kind, atMs: at - t0, resumeMs: Date.now() - at, prune });
      const aim = prune ? ` (${describeHit(prune)})` : '';
      log(`  fault ${f.kind} at ${((at - t0) / 1000).toFixed(1)} s${aim}: resumed after ${((Date.now() - at) / 1000).toFixed(1)} s`);
    }
    await finished;
    const durationMs = Date.now() - t0;
    const histories = new ExperimentHistories(client);
    for (const f of faults) if (f.prune) f.prune.awaitAttempts = await awaitTrainingAttempts(histories, f.prune.runId);
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
    if (backend === 'slurm')
      for (const job of await activeSlurmJobs(opts.home)) violations.push(`Slurm job left after the stack stopped: ${job}`);
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
    } else if (kind === 'temporal' || kind === 'temporal-prune') {
      if (!state.temporal.pid) return 'no temporal pid';
      process.kill(state.temporal.pid, 'SIGKILL');
    } else if (kind === 'postgres') {
      await pgServer.killAndRestart(PG_DOWN_MS);
    } else {
      await pgServer.proxy.cut(PG_DOWN_MS);
    }
    return undefined;
  }

  /** Temporal died: `up` ends the stack (then a new `up` on the same home, the same SQLite file). */
  async function stopStack(old: UpProcess): Promise<void> {
    await Promise.race([old.exited, sleep(30_000)]);
    old.killAll();
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
