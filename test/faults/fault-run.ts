// One campaign under a seeded fault schedule: a real `flywheel up` (Temporal dev server on SQLite, embedded
// PostgreSQL, supervised workers), the fixture trainer on the local backend, the feedback API under concurrent
// writes; each fault is injected at its moment and the time until the loop makes progress again is measured.
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { Pool } from 'pg';
import { openDb } from '../../db/client';
import { startFeedbackServer } from '../../cli/feedback-server';
import { commandLine, isAlive } from '../../infra/dev-stack/processes';
import { runCli } from '../helpers/cli';
import { fixtureSpec } from '../helpers/specs';
import { processesMentioning, spawnUp, stackEnv, type UpProcess } from '../stack/up-process';
import { seededRandom, type FaultKind, type ScheduledFault } from './fault-schedule';
import { checkInvariants, type RunFacts } from './invariants';

export interface FaultRunOptions {
  seed: number;
  schedule: ScheduledFault[];
  home: string;
  /** Feedback events written concurrently (each sent 1–3 times) while faults land. @default 0 */
  feedbackEvents?: number;
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
}

export async function runFaultCampaign(opts: FaultRunOptions): Promise<FaultRunReport> {
  const log = opts.log ?? (() => undefined);
  const env = await stackEnv(opts.home);
  const ups: UpProcess[] = [];
  const startUp = async (): Promise<UpProcess> => {
    const u = spawnUp(opts.home, env);
    ups.push(u);
    await u.waitFor(/^flywheel is up$/, { timeoutMs: 180_000 });
    u.state();
    return u;
  };
  let up = await startUp();
  const pgUrl = up.state()!.postgres.url;
  const pool = new Pool({ connectionString: pgUrl, max: 3, connectionTimeoutMillis: 5_000 });
  pool.on('error', () => undefined);
  const connection = await Connection.connect({ address: up.state()!.temporal.address });
  const client = new Client({ connection });
  const feedbackDb = openDb(pgUrl, { max: 8 });
  const feedback = await startFeedbackServer({ db: feedbackDb.db, port: 0 });
  const violations: string[] = [];
  const faults: InjectedFault[] = [];
  try {
    const campaignId = `faults-s${opts.seed}`;
    const workflowId = `${campaignId}/inner/1`;
    const n = opts.experiments ?? 4;
    const spec = fixtureSpec(campaignId, { steps: 12, sleepMs: 6000 }, { budget: { experiments: n, parallelism: 2 }, batchSize: 2, maxTrainingAttempts: 3, seed: opts.seed, startupTrials: n });
    // A real choice for the sampler: the seed decides the proposals, the offset their scores.
    spec.searchSpace = { ...spec.searchSpace, offset: { type: 'categorical', choices: [0, 0.5, 1, 1.5] } } as typeof spec.searchSpace;
    const specFile = path.join(opts.home, 'spec.json');
    fs.writeFileSync(specFile, JSON.stringify(spec));
    const started = await runCli(env, ['run', specFile, '--id', workflowId, '--detach'], 120_000);
    if (started.status !== 0) throw new Error(`flywheel run failed: ${started.stderr}`);
    const t0 = Date.now();
    let done = false;
    const finished = (async () => {
      for (;;) {
        try {
          await client.workflow.getHandle(workflowId).result();
          return;
        } catch (e) {
          if ((e as Error).name === 'WorkflowFailedError') throw e;
          await sleep(500); // the server is restarting
        }
      }
    })().finally(() => (done = true));

    const hammer = writeFeedback(feedback.url, campaignId, opts.feedbackEvents ?? 0, seededRandom(opts.seed ^ 0x5eed));
    const rnd = seededRandom(opts.seed ^ 0xfa17);
    for (const f of opts.schedule) {
      while (!done && Date.now() - t0 < f.atMs) await sleep(100);
      if (done) break;
      // Between experiments no trainer runs: wait a little for the next one rather than miss the kind.
      for (let i = 0; f.kind === 'trainer' && !trainerPids(opts.home).length && !done && i < 100; i++) await sleep(100);
      const before = await progress(pool);
      const skipped = await inject(f.kind);
      const at = Date.now();
      if (skipped) {
        faults.push({ kind: f.kind, atMs: at - t0, skipped });
        continue;
      }
      if (f.kind === 'temporal' || f.kind === 'postgres') up = await restartUp(up);
      while (!done && (await progress(pool)) <= before) await sleep(100);
      faults.push({ kind: f.kind, atMs: at - t0, resumeMs: Date.now() - at });
      log(`  fault ${f.kind} at ${((at - t0) / 1000).toFixed(1)} s: resumed after ${((Date.now() - at) / 1000).toFixed(1)} s`);
    }
    await finished;
    const fb = await hammer;
    const checked = await checkInvariants(pool, client, workflowId, fb.accepted, fb.sent);
    violations.push(...checked.violations);
    return { seed: opts.seed, faults, violations, facts: checked.facts };

    async function inject(kind: FaultKind): Promise<string | undefined> {
      const state = up.state()!;
      if (kind === 'worker') {
        const live = Object.entries(state.workers).filter(([, w]) => w?.pid && isAlive(w.pid));
        if (!live.length) return 'no live worker';
        process.kill(live[Math.floor(rnd() * live.length)][1]!.pid!, 'SIGKILL');
      } else if (kind === 'trainer') {
        const trainers = trainerPids(opts.home);
        if (!trainers.length) return 'no trainer running';
        process.kill(trainers[Math.floor(rnd() * trainers.length)], 'SIGKILL');
      } else {
        const pid = kind === 'temporal' ? state.temporal.pid : state.postgres.pid;
        if (!pid) return `no ${kind} pid`;
        process.kill(pid, 'SIGKILL');
      }
      return undefined;
    }
  } finally {
    await feedback.close();
    await feedbackDb.close().catch(() => undefined);
    await connection.close().catch(() => undefined);
    await pool.end().catch(() => undefined);
    up.child.kill('SIGINT');
    await Promise.race([up.exited, sleep(30_000)]);
    for (const u of ups) u.killAll();
    const orphans = processesMentioning(opts.home);
    if (orphans.length) violations.push(`${orphans.length} processes left after the stack stopped: ${orphans[0]}`);
  }

  /** Temporal or PostgreSQL died: `up` ends the stack; a new `up` on the same home (same SQLite file and data). */
  async function restartUp(old: UpProcess): Promise<UpProcess> {
    await Promise.race([old.exited, sleep(30_000)]);
    old.killAll();
    return startUp();
  }
}

/** Rows the loop has written so far; -1 while PostgreSQL does not answer. */
async function progress(pool: Pool): Promise<number> {
  try {
    const r = await pool.query(`SELECT (SELECT count(*) FROM metric_points) + (SELECT count(*) FROM eval_results) + (SELECT count(*) FROM training_runs) AS n`);
    return Number(r.rows[0].n);
  } catch {
    return -1;
  }
}

function trainerPids(home: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => {
      const cmd = commandLine(pid) ?? '';
      return cmd.includes('fixture-trainer.js') && cmd.includes(' train ') && cmd.includes(home);
    });
}

/** Sends `count` feedback events from 8 concurrent clients, each 1–3 times, retrying until each is answered 2xx. */
async function writeFeedback(url: string, campaignId: string, count: number, rnd: () => number): Promise<{ sent: Set<string>; accepted: Set<string> }> {
  const sent = new Set<string>();
  const accepted = new Set<string>();
  const queue = Array.from({ length: count }, (_, i) => ({ id: `fb-${campaignId}-${i}`, copies: 1 + Math.floor(rnd() * 3) }));
  const client = async (): Promise<void> => {
    for (let job = queue.shift(); job; job = queue.shift()) {
      const event = { id: job.id, campaignId, kind: 'accept', modelVersion: 'm0', prompt: `p${job.id}`, output: 'o' };
      for (let copy = 0; copy < job.copies; copy++) {
        for (let tries = 0; ; tries++) {
          sent.add(job.id);
          const status = await fetch(`${url}/v1/feedback`, { method: 'POST', body: JSON.stringify(event), signal: AbortSignal.timeout(15_000) }).then((r) => r.status, () => 0);
          if (status === 200 || status === 201) {
            accepted.add(job.id);
            break;
          }
          if (status !== 0 && status !== 503) throw new Error(`feedback ${job.id}: HTTP ${status}`);
          if (tries > 600) throw new Error(`feedback ${job.id}: no answer after ${tries} tries`);
          await sleep(100);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, client));
  return { sent, accepted };
}
