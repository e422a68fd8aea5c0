// One conformance suite for every training backend (STYLE: parallel adapters, one shared suite): launch
// idempotence, success, failure, cancel, reattach from a new worker, preemption resumed from the checkpoint, and,
// end to end through the workflows, a campaign that completes and a run past its time limit recorded as timed_out.
// Each backend's test file calls `backendConformance` once; a case a backend cannot express is an explicit skip.
import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import type { JobHandle, JobStatus, LaunchRequest, TrainingBackend } from '../../backends';
import { launchDirOf } from '../../backends/run-dir-files';
import { resolveLimits } from '../../core/resource-limits';
import type { CampaignSpecInput } from '../../core/spec';
import { experiments, trainingRuns } from '../../db/schema';
import { scratchDir } from '../helpers/env';
import { eventually, loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { fixtureSpec, uniqueName } from '../helpers/specs';
import { startTestWorkers, type TestWorkers } from '../helpers/workers';

const FIXTURE_TRAINER = path.join(__dirname, '..', 'fixtures', 'fixture-trainer.js');

export interface ConformanceAdapter {
  kind: string;
  /** A fresh backend instance: a new one stands for a restarted worker. */
  make(): TrainingBackend;
  /** Preempts the running job the way the cluster would (requeue, eviction); absent = skipped with `skip.preemption`. */
  preempt?(b: TrainingBackend, h: JobHandle): Promise<void>;
  /** The campaign's `backend:` block, and how to give a run a time limit of a few seconds to a minute. */
  backendSpec: Record<string, unknown>;
  timeLimited(spec: CampaignSpecInput): CampaignSpecInput;
  /** Why a case cannot be expressed on this backend. */
  skip?: { preemption?: string };
  /** Called with every handle launched, so the file can clean up after a failed test. */
  track?(h: JobHandle): void;
  /** Backend-specific checks after a preempted job succeeded (how the cluster recorded the resume). */
  afterPreemption?(h: JobHandle, req: LaunchRequest): Promise<void>;
  /** Backend-specific checks after a cancel (the job left the cluster's queue, say). */
  afterCancel?(h: JobHandle, req: LaunchRequest): Promise<void>;
  /** Longest wait for a short job to finish. @default 60000 */
  finishTimeoutMs?: number;
}

export const lines = (file: string): string[] =>
  fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : [];
/** The launches the backend recorded, one line each, in the run's launch directory. */
export const launchLines = (runDir: string): string[] => lines(path.join(launchDirOf(runDir), 'launches.log'));
export const steps = (runDir: string): number[] =>
  lines(path.join(runDir, 'metrics.jsonl')).map((l) => (JSON.parse(l) as { step: number }).step);

/** Live processes whose command line names this run directory (launcher and trainer). */
export function processesOf(runDir: string): number[] {
  const out: number[] = [];
  for (const pid of fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(runDir)) out.push(Number(pid));
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

/**
 * A run directory with a run.json for the fixture trainer (a space and a '%' in its path), and the launch request,
 * with the default limits a campaign's launch carries (capped logs; the local backend watches).
 */
export function fixtureRun(kind: string, label: string, params: Record<string, number | boolean>): LaunchRequest {
  const runId = `${uniqueName(label)}/e0/r1`;
  const runDir = path.join(scratchDir(`${kind}-conf`), 'run dirs 100%j', runId.replace(/\//g, '_'));
  fs.mkdirSync(runDir, { recursive: true });
  fs.writeFileSync(path.join(runDir, 'run.json'), JSON.stringify({ runId, params, checkpointEvery: 0 }));
  return { runId, runDir, argv: [process.execPath, FIXTURE_TRAINER, 'train', '--run-dir', runDir], limits: resolveLimits(undefined) };
}

/** The job's first status that is not `running`, polled until `timeoutMs`. */
export function jobEnded(b: TrainingBackend, h: JobHandle, timeoutMs: number): Promise<JobStatus> {
  return eventually(
    `job ${h.ref} to finish`,
    async () => {
      const s = await b.status(h);
      return s.state === 'running' ? undefined : s;
    },
    timeoutMs,
  );
}

export function backendConformance(a: ConformanceAdapter): void {
  const launch = async (b: TrainingBackend, req: LaunchRequest) => {
    const h = await b.launch(req);
    a.track?.(h);
    return h;
  };
  const finished = (b: TrainingBackend, h: JobHandle, timeoutMs = a.finishTimeoutMs ?? 60_000): Promise<JobStatus> =>
    jobEnded(b, h, timeoutMs);

  describe(`${a.kind} backend conformance`, () => {
    test('launching twice, and twice at once from two instances, starts one job', async () => {
      const req = fixtureRun(a.kind, 'twice', { steps: 5 });
      const b = a.make();
      const [h1, h2] = [await launch(b, req), await launch(b, req)];
      expect(h2.ref).toBe(h1.ref);
      const racing = fixtureRun(a.kind, 'race', { steps: 5 });
      const [r1, r2] = await Promise.all([launch(a.make(), racing), launch(a.make(), racing)]);
      expect(r2.ref).toBe(r1.ref);
      for (const [r, h] of [
        [req, h1],
        [racing, r1],
      ] as const) {
        expect((await finished(b, h)).state).toBe('succeeded');
        expect(launchLines(r.runDir)).toHaveLength(1);
      }
    });

    test('a completed job is succeeded, with its metrics in the run dir', async () => {
      const req = fixtureRun(a.kind, 'ok', { steps: 10 });
      const b = a.make();
      const h = await launch(b, req);
      expect(h).toMatchObject({ backend: a.kind, runId: req.runId, runDir: req.runDir });
      expect(await finished(b, h)).toMatchObject({ state: 'succeeded', exitCode: 0 });
      expect(steps(req.runDir)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    });

    test('a failing trainer is failed with its exit code and stderr tail', async () => {
      const req = fixtureRun(a.kind, 'crash', { crash: true });
      const b = a.make();
      const h = await launch(b, req);
      const s = await finished(b, h);
      expect(s).toMatchObject({ state: 'failed', exitCode: 3 });
      expect(s.reason).toBeUndefined();
      expect(await b.stderrTail(h, 5)).toContain('exploding on purpose');
    });

    test('cancel stops the job and leaves no process of it', async () => {
      const req = fixtureRun(a.kind, 'cancel', { steps: 600, sleepMs: 600_000 });
      const b = a.make();
      const h = await launch(b, req);
      await eventually('the trainer to start', async () => (steps(req.runDir).length > 0 ? true : undefined), 60_000);
      await b.cancel(h);
      expect(processesOf(req.runDir)).toEqual([]);
      expect((await b.status(h)).state).toBe('failed');
      await a.afterCancel?.(h, req);
      await b.cancel(h); // a second cancel of a finished job is a no-op
    });

    test('a new instance (a restarted worker) reattaches to the running job without starting another', async () => {
      const req = fixtureRun(a.kind, 'reattach', { steps: 20, sleepMs: 4_000 });
      const h = await launch(a.make(), req);
      await eventually('the trainer to start', async () => (steps(req.runDir).length > 0 ? true : undefined), 60_000);
      const fresh = a.make();
      const again = await launch(fresh, req);
      expect(again.ref).toBe(h.ref);
      expect((await fresh.status(again)).state).toBe('running');
      expect(await finished(fresh, again)).toMatchObject({ state: 'succeeded' });
      expect(launchLines(req.runDir)).toHaveLength(1);
      expect(steps(req.runDir)).toHaveLength(20);
    });

    const preemption = a.preempt ? test : test.skip;
    preemption(
      `a preempted job resumes from its checkpoint and succeeds${a.skip?.preemption ? ` (skipped: ${a.skip.preemption})` : ''}`,
      async () => {
        const req = fixtureRun(a.kind, 'preempt', { steps: 60, sleepMs: 15_000, checkpointEvery: 10 });
        const b = a.make();
        const h = await launch(b, req);
        await eventually('a checkpoint and a few steps after it', async () => (steps(req.runDir).length >= 13 ? true : undefined), 60_000);
        await a.preempt!(b, h);
        expect((await b.status(h)).state).toBe('running');
        expect(await finished(b, h, 180_000)).toMatchObject({ state: 'succeeded', exitCode: 0 });
        const seen = steps(req.runDir);
        // The resumed run starts after a checkpoint (a multiple of 10), not at step 1, and reaches the last step.
        const restartAt = seen.findIndex((s, i) => i > 0 && s <= seen[i - 1]);
        expect(restartAt).toBeGreaterThan(0);
        expect(seen[restartAt] - 1).toBeGreaterThanOrEqual(10);
        expect((seen[restartAt] - 1) % 10).toBe(0);
        expect(seen[seen.length - 1]).toBe(60);
        expect(launchLines(req.runDir).length).toBe(2);
        await a.afterPreemption?.(h, req);
      },
      240_000,
    );

    describe('through the workflows', () => {
      let harness: LoopHarness;
      beforeAll(async () => {
        harness = await loopHarness(`${a.kind}-conf-loop`);
      });
      afterAll(() => harness?.close());
      const runOf = async (experimentId: string) =>
        (await harness.db.db.select().from(trainingRuns).where(eq(trainingRuns.experimentId, experimentId)))[0];

      test('a campaign completes: one run per experiment, its checkpoint scored', async () => {
        const workers = await harness.workers(`t-${a.kind}-conf`);
        try {
          const id = uniqueName(`${a.kind}-conf`);
          const result = await (await workers.startLoop(id, { ...fixtureSpec(id, { steps: 10 }), backend: a.backendSpec })).result();
          expect(result.best?.experimentId).toBe(`${id}/inner/1/e0`);
          const run = await runOf(`${id}/inner/1/e0`);
          a.track?.(run.handle!);
          expect(run).toMatchObject({ backend: a.kind, status: 'succeeded', exitCode: 0, launches: 1 });
        } finally {
          await workers.stop();
        }
      });

      test('a training worker restarted mid-job reattaches: one job launched, the run succeeds', async () => {
        const first = await harness.workers(`t-${a.kind}-restart`);
        let second: TestWorkers | undefined;
        try {
          const id = uniqueName(`${a.kind}-restart`);
          const h = await first.startLoop(id, { ...fixtureSpec(id, { steps: 20, sleepMs: 8_000 }), backend: a.backendSpec });
          const run = await eventually(
            'the trainer to start',
            async () => {
              const r = await runOf(`${id}/inner/1/e0`);
              return r && steps(r.runDir).length > 0 ? r : undefined;
            },
            90_000,
          );
          a.track?.(run.handle!);
          await first.stop();
          second = await startTestWorkers({ prefix: first.prefix, db: harness.db.db, home: harness.home });
          expect((await h.result()).best?.experimentId).toBe(`${id}/inner/1/e0`);
          expect(await runOf(`${id}/inner/1/e0`)).toMatchObject({ status: 'succeeded', launches: 1 });
          expect(launchLines(run.runDir)).toHaveLength(1);
          expect(steps(run.runDir)).toHaveLength(20);
        } finally {
          await first.stop();
          await second?.stop();
        }
      }, 180_000);

      test('a run past its time limit is recorded as timed_out, with no second attempt', async () => {
        const workers = await harness.workers(`t-${a.kind}-limit`);
        try {
          const id = uniqueName(`${a.kind}-limit`);
          const spec = a.timeLimited({
            ...fixtureSpec(id, { steps: 600, sleepMs: 600_000 }, { maxTrainingAttempts: 2 }),
            backend: a.backendSpec,
          } as CampaignSpecInput);
          const h = await workers.startLoop(id, spec);
          const run = await eventually('the job to be launched', () => runOf(`${id}/inner/1/e0`));
          a.track?.(run.handle!);
          expect((await h.result()).best).toBeUndefined();
          expect((await runOf(`${id}/inner/1/e0`)).status).toBe('timed_out');
          const [exp] = await harness.db.db
            .select()
            .from(experiments)
            .where(eq(experiments.id, `${id}/inner/1/e0`));
          expect(exp.status).toBe('timed_out');
          expect(
            await harness.db.db
              .select()
              .from(trainingRuns)
              .where(eq(trainingRuns.experimentId, `${id}/inner/1/e0`)),
          ).toHaveLength(1);
          expect(processesOf(run.handle!.runDir)).toEqual([]);
        } finally {
          await workers.stop();
        }
      }, 240_000);
    });
  });
}
