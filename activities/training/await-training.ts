// awaitTraining: follows a launched job to its end. Heartbeats carry { jobRef, metricsOffset }, so a retry on
// another worker (after a crash) reattaches to the same process and resumes streaming where the last one stopped.
// New metric points go to PostgreSQL in batches; the median rule may stop a weak run early. Every stop Flywheel
// decides (prune, time limit, cancel) is stored as the run's verdict before the kill (services/training-runs.ts), so an attempt
// that reattaches after a lost completion reports that verdict and the experiment never relaunches the run.
// Everything read from the run directory is the trainer's (untrusted) output, read confined (services/run-files.ts);
// what the launcher records (launch count, exit code, logs) comes from the launch directory, which it cannot write.
// The metrics it reports only ever prune (named trainer-reported there); they never reach the promotion gate.
import fs from 'node:fs';
import path from 'node:path';
import { stderrReason } from '../../core/stderr-reason';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { JobStatus, TrainingBackend } from '../../backends';
import { launchDirOf } from '../../backends/run-dir-files';
import { LAUNCHES_LOG } from '../../core/contract-files';
import { ContractViolationError } from '../../core/errors';
import { METRICS_FILE } from '../../core/job-contract';
import { limitReason } from '../../core/resource-limits';
import { createPruner, type PeerCurve } from '../../core/pruning';
import { campaignOfRow } from '../campaign-of';
import { withDefaults, type ActivityDeps, type ActivityDepsWithDefaults } from '../deps';
import { freezeCheckpoint, readManifest, verifyCheckpoint } from '../../services/checkpoint-manifest';
import type { NewCheckpoint } from '../../services/checkpoints';
import { recordTrainingCost, trainingCostRow, type TrainingCost } from '../../services/cost-ledger';
import { markExperimentCancelled } from '../../services/experiments';
import { peerCurves, storeMetricPoints } from '../../services/metric-points';
import {
  decideRun,
  markRunCancelled,
  recordRunEnd,
  runCostBasis,
  runStart,
  type RunCostBasis,
  type RunStart,
} from '../../services/training-runs';
import { readMetrics } from './metrics-stream';
import type { AwaitTrainingInput, RunVerdict, TrainingOutcome } from '../../contracts/training';
import type { CampaignSpec } from '../../core/spec';

interface Progress {
  jobRef: string;
  metricsOffset: number;
}

/** How often the job's state is checked at first: the floor of the orchestration overhead of a short run. */
const POLL_MS = 25;
/**
 * How often at first while the backend's end watch stands: the watch wakes the follower at the end, so the poll only
 * backs it up (a launcher killed before it could record an end, a watch that missed one), and everything else a check
 * looks for is on a 1 s beat anyway (the metric flush, the resource watcher's look). A no-op warm-trained run was
 * checked about ten times at 25 ms, about twice at 250 (strace: its exit_code read 10.7 times, then 4); what that
 * saves in CPU was within the bench's run-to-run noise, so none is claimed.
 */
const WATCHED_POLL_MS = 250;
/** The slowest the check gets: a long run's end is noticed within a second. */
const MAX_POLL_MS = 1000;

/**
 * The wait before the next check of a job that has run `elapsedMs`: 25 ms at first (250 ms while an end watch stands:
 * `watched`), then a fiftieth of its age (up to 1 s), so noticing the end adds at most 2% to a run (1% on average: the
 * overhead bench's budget for a 10 s run), and 200 long runs followed by one worker cost 200 checks a second, not
 * 8,000 (bench/scale.ts found the fixed 25 ms starving a 2-core worker at 200 jobs).
 */
export function pollDelayMs(elapsedMs: number, watched = false): number {
  return Math.min(MAX_POLL_MS, Math.max(watched ? WATCHED_POLL_MS : POLL_MS, Math.floor(elapsedMs / 50)));
}
/** How often new metric lines are read and stored while the job runs. */
const FLUSH_MS = 1000;
/**
 * No heartbeat in an attempt's first second. The SDK sends the first heartbeat at once (later ones at most every 80 % of
 * the timeout), and each is a round trip in which the server persists the activity's state: a short run paid it for
 * nothing. Liveness needs a beat within the 10 s timeout; a retry that finds no details reads the metrics from the
 * start, stored idempotently; a cancel arrives with the first beat. bench/durable-throughput.ts: 8 at once on 2 cores,
 * this and scoreCheckpoint's per-item beat cost about a fifth of an experiment's CPU (docs/scale.md).
 */
export const QUIET_HEARTBEAT_MS = 1000;

/**
 * What runTraining knows of the run it follows, from its own reads: the run's start and stored verdict, and its
 * campaign (so the end is priced here and its ledger row written with it). The run's end then also frees its capacity
 * slot, in the same statement as the rest of the end (its checkpoints, its row, its ledger row).
 */
export interface KnownRun extends RunStart {
  campaign: { id: string; spec: CampaignSpec };
}

/** A followed run's input, with what its caller knows (`known`: runTraining's). */
type Followed = AwaitTrainingInput & { known?: KnownRun };

/** `known`: what runTraining has just read or written of the run (none: read here, and the slot is the workflow's). */
export async function awaitTraining(given: ActivityDeps, awaited: AwaitTrainingInput, known?: KnownRun): Promise<TrainingOutcome> {
  const input: Followed = known ? { ...awaited, known } : awaited;
  const ctx = Context.current();
  const began = Date.now();
  const beat = (details: Progress) => {
    if (Date.now() - began >= QUIET_HEARTBEAT_MS) ctx.heartbeat(details);
  };
  const deps = withDefaults(given);
  const { backendFor } = deps;
  const backend = backendFor(input.handle.backend);
  const prior = ctx.info.heartbeatDetails as Progress | undefined;
  const offset = prior?.jobRef === input.handle.ref ? prior.metricsOffset : 0;
  const metricsFile = path.join(input.handle.runDir, METRICS_FILE);
  const run = known ?? (await runStart(deps.db, input.runId));
  const startedAt = run?.startedAt?.getTime() ?? deps.clock.now();
  // An earlier attempt decided to stop the job: finish carrying it out and report that decision, not the kill's trace.
  if (run?.verdict) return stopFor(deps, backend, input, run.verdict, offset);
  const f: Follower = {
    deps,
    backend,
    input,
    metricsFile,
    beat,
    pruner: createPruner(input.pruning),
    offset,
    unjudged: [],
    lastFlush: 0,
    partialTail: 0,
    woken: false,
    watched: false,
  };

  // The backend's end watch, where it has one, wakes the wait below as the job ends; the poll stays, slower.
  const unwatch = backend.watchEnd?.(input.handle, () => {
    f.woken = true;
    f.wake?.();
  });
  f.watched = unwatch !== undefined;
  try {
    for (;;) {
      f.woken = false;
      const status = await backend.status(input.handle);
      const outcome = (await readNewMetrics(f, status)) ?? (await judgeNewPoints(f)) ?? (await endOrTimeOut(f, status, startedAt));
      if (outcome) return outcome;
      await waitOrCancel(f, ctx, startedAt);
    }
  } finally {
    unwatch?.();
  }
}

/** One attempt's following of its job: what it reads with, and how far it has read and judged. */
interface Follower {
  deps: ActivityDepsWithDefaults;
  backend: TrainingBackend;
  input: Followed;
  metricsFile: string;
  /** Heartbeats, except in the attempt's first second (QUIET_HEARTBEAT_MS). */
  beat: (details: Progress) => void;
  /** The spec's pruner (core/pruning.ts); none for `rule: none`. */
  pruner: ReturnType<typeof createPruner>;
  offset: number;
  last?: { step: number; value: number };
  /** Points of the pruned metric read but not yet judged, in order. */
  unjudged: { step: number; value: number }[];
  peers?: PeerCurve[];
  lastFlush: number;
  /** Bytes after the last newline at the last flush: after the trainer's exit, a truncated line. */
  partialTail: number;
  /** The end watch called since the last status check: check again without waiting. */
  woken: boolean;
  /** The backend's end watch stands: the poll only backs it up (pollDelayMs). */
  watched: boolean;
  /** Ends the current wait early (set while waiting). */
  wake?: () => void;
}

/** Reads and stores the metric lines written since the last flush, queues the pruned metric's points, and heartbeats. */
async function flush(f: Follower): Promise<void> {
  const { input } = f;
  // A served run's lines are in its server's folder until it ends (backends/local/train-server.ts), at the same offsets.
  const file = f.backend.liveRunDir ? path.join(f.backend.liveRunDir(input.handle), METRICS_FILE) : f.metricsFile;
  const chunk = readMetrics(file, f.offset);
  f.partialTail = chunk.partialBytes;
  await storeMetricPoints(f.deps.db, input.runId, chunk.points);
  for (const p of chunk.points) {
    if (p.name !== input.pruning.metric || (f.last && p.step < f.last.step)) continue;
    f.last = { step: p.step, value: p.value };
    f.unjudged.push(f.last);
  }
  f.offset = chunk.nextOffset;
  f.beat({ jobRef: input.handle.ref, metricsOffset: f.offset });
  f.lastFlush = f.deps.clock.now();
}

/** Flushes every FLUSH_MS while the job runs, and to the end once it has exited; a broken contract ends the run. */
async function readNewMetrics(f: Follower, status: JobStatus): Promise<TrainingOutcome | undefined> {
  try {
    if (status.state !== 'running') {
      // One read takes at most 4 MiB: after the exit, read on to the end before judging the tail.
      for (let before = -1; before !== f.offset;) {
        before = f.offset;
        await flush(f);
      }
    } else if (f.deps.clock.now() - f.lastFlush >= FLUSH_MS) {
      await flush(f);
    }
  } catch (e) {
    // metrics.jsonl became a link, a FIFO or too big: the run is over, whatever it still does.
    if (!(e instanceof ContractViolationError)) throw e;
    return brokeContract(f.deps, f.backend, f.input, e, status);
  }
  return undefined;
}

/**
 * Every point is judged in order, the last ones too when the run has just ended, against a peer set fixed before the
 * run started: the verdict and its step do not depend on how fast the run or this reader went. A prune stops the run.
 */
async function judgeNewPoints(f: Follower): Promise<TrainingOutcome | undefined> {
  const { input } = f;
  if (!(f.pruner && f.unjudged.length > 0)) return undefined;
  f.peers ??= await peerCurves(f.deps.db, input.innerLoopId, input.runId, input.pruning.metric);
  const verdict = f.pruner.prune(f.unjudged, f.peers);
  f.unjudged = [];
  if (!verdict) return undefined;
  // The verdict is stored before the kill: an attempt that reattaches reports it, never relaunches.
  // Said as what it is: the trainer's own figure, which only prunes (Flywheel's scores alone select and gate).
  const why = `pruned at step ${verdict.step}: trainer-reported ${verdict.reason}`;
  return stopFor(
    f.deps,
    f.backend,
    input,
    await decideRun(f.deps.db, input.runId, { status: 'pruned', lastStep: verdict.step, error: why }),
    f.offset,
  );
}

/** The run's outcome once its job has ended, or its stop once it has run past its time limit; undefined while it runs on. */
async function endOrTimeOut(f: Follower, status: JobStatus, startedAt: number): Promise<TrainingOutcome | undefined> {
  const { deps, input } = f;
  if (status.state !== 'running') {
    const truncated =
      f.partialTail > 0
        ? `${f.metricsFile} ends with a truncated line (${f.partialTail} bytes at offset ${f.offset}, no newline)`
        : undefined;
    return finish(deps, f.backend, input, status, truncated);
  }
  if (deps.clock.now() - startedAt > input.timeoutSeconds * 1000) {
    const decided = await decideRun(deps.db, input.runId, {
      status: 'timed_out',
      lastStep: f.last?.step,
      error: `exceeded ${input.timeoutSeconds}s`,
    });
    return stopFor(deps, f.backend, input, decided, f.offset);
  }
  return undefined;
}

/** Heartbeats and sleeps until the next check; a cancel its workflow requested stops the job and the experiment first. */
async function waitOrCancel(f: Follower, ctx: Context, startedAt: number): Promise<void> {
  const { deps, input } = f;
  try {
    f.beat({ jobRef: input.handle.ref, metricsOffset: f.offset });
    if (f.woken) return;
    const nap = ctx.sleep(pollDelayMs(deps.clock.now() - startedAt, f.watched));
    // A nap the watch cut short still rejects on a later cancel: nobody awaits it then.
    nap.catch(() => undefined);
    await Promise.race([nap, new Promise<void>((resolve) => (f.wake = resolve))]);
  } catch (e) {
    if (!(e instanceof CancelledFailure)) throw e;
    // Only a real cancel request stops the job; a worker shutting down leaves it for the next attempt to reattach.
    if (ctx.cancellationDetails?.cancelRequested) {
      await decideRun(deps.db, input.runId, { status: 'cancelled', lastStep: f.last?.step, error: 'cancelled by its workflow' });
      await f.backend.cancel(input.handle);
      await markRunCancelled(deps.db, input.runId, new Date(deps.clock.now()));
      await recordRunCost(deps, input);
      await markExperimentCancelled(deps.db, input.experimentId, new Date(deps.clock.now()));
    }
    throw e;
  }
}

/**
 * Carries out a stored verdict: stops the job (a no-op when it is already gone), stores the metric lines it wrote
 * up to the kill, and records the verdict as the run's outcome. A cancel reattached to (its workflow was cancelled,
 * the completion lost) has no outcome to report: it fails, non-retryable.
 */
async function stopFor(
  deps: ActivityDepsWithDefaults,
  backend: TrainingBackend,
  input: Followed,
  verdict: RunVerdict,
  offset: number,
): Promise<TrainingOutcome> {
  await backend.cancel(input.handle);
  const metricsFile = path.join(input.handle.runDir, METRICS_FILE);
  try {
    for (let before = -1; before !== offset;) {
      before = offset;
      const chunk = readMetrics(metricsFile, offset);
      await storeMetricPoints(deps.db, input.runId, chunk.points);
      offset = chunk.nextOffset;
    }
  } catch (e) {
    // The verdict stands; lines the trainer made unreadable after it are not stored.
    if (!(e instanceof ContractViolationError)) throw e;
  }
  if (verdict.status === 'cancelled') {
    await markRunCancelled(deps.db, input.runId, new Date(deps.clock.now()));
    throw ApplicationFailure.nonRetryable(`${input.runId}: ${verdict.error}`, 'RunCancelledError');
  }
  return record(deps, input, { runId: input.runId, status: verdict.status, lastStep: verdict.lastStep, error: verdict.error });
}

/**
 * The trainer made its metrics unreadable (a link, a FIFO, too big) while it ran or at its end: its job is stopped
 * and the run fails with the reason. No verdict is needed first: a retry meets the same file and decides the same.
 */
async function brokeContract(
  deps: ActivityDepsWithDefaults,
  backend: TrainingBackend,
  input: Followed,
  e: ContractViolationError,
  status: JobStatus,
): Promise<TrainingOutcome> {
  if (status.state === 'running') await backend.cancel(input.handle);
  const stderrTail = await backend.stderrTail(input.handle, 20);
  const error = `the trainer broke the job contract: ${e.message}`;
  return record(deps, input, { runId: input.runId, status: 'failed', exitCode: status.exitCode, error }, stderrTail, status.trainerSeconds);
}

/** `truncated`: what is wrong with metrics.jsonl's tail, if anything; a successful exit with it breaks the contract. */
async function finish(
  deps: ActivityDepsWithDefaults,
  backend: TrainingBackend,
  input: Followed,
  status: JobStatus,
  truncated?: string,
): Promise<TrainingOutcome> {
  const stderrTail = await backend.stderrTail(input.handle, 20);
  const unsuccessful = unsuccessfulEnd(input, status);
  if (unsuccessful) {
    // The trainer's own last word on why, beside the exit code (a limit or a time-out is its own reason).
    const said = status.state === 'failed' && status.reason === undefined ? stderrReason(stderrTail) : undefined;
    const error = said ? `${unsuccessful.error}: ${said}` : unsuccessful.error;
    return record(
      deps,
      input,
      { runId: input.runId, ...unsuccessful, error, exitCode: status.exitCode },
      stderrTail,
      status.trainerSeconds,
    );
  }
  let entries;
  try {
    if (truncated) throw new Error(truncated);
    entries = readManifest(input.handle.runDir);
    if (entries.length === 0) throw new Error('the manifest lists no checkpoint');
    for (const c of entries) verifyCheckpoint(path.join(input.handle.runDir, c.path), c.sha256, input.runId, input.handle.runDir);
    for (const c of entries) freezeCheckpoint(path.join(input.handle.runDir, c.path), input.handle.runDir);
  } catch (e) {
    const error = `the trainer exited 0 but broke the job contract: ${(e as Error).message}`;
    return record(deps, input, { runId: input.runId, status: 'failed', exitCode: 0, error }, stderrTail, status.trainerSeconds);
  }
  const rows = entries.map((c) => ({
    id: `${input.runId}/step-${c.step}`,
    runId: input.runId,
    experimentId: input.experimentId,
    step: c.step,
    path: path.join(input.handle.runDir, c.path),
    sha256: c.sha256,
    format: c.format,
  }));
  const final = rows[rows.length - 1];
  return record(
    deps,
    input,
    { runId: input.runId, status: 'succeeded', exitCode: 0, checkpointId: final.id, lastStep: final.step },
    stderrTail,
    status.trainerSeconds,
    rows,
  );
}

/** How a run that did not exit cleanly ended, as its status and reason; undefined for a clean exit. */
function unsuccessfulEnd(input: AwaitTrainingInput, status: JobStatus): { status: 'timed_out' | 'failed'; error: string } | undefined {
  // The scheduler's time limit (Slurm's --time), not our own clock, ended the job: the same verdict as ours.
  if (status.reason === 'timeout') return { status: 'timed_out', error: `the job exceeded its ${input.handle.backend} time limit` };
  // The backend ended the run past one of its resource limits: the limit is the reason, not the kill's exit code.
  if (status.reason === 'limit' && status.limit) return { status: 'failed', error: limitReason(status.limit) };
  if (status.state === 'succeeded') return undefined;
  const error =
    status.state === 'lost'
      ? 'the trainer process vanished without an exit code'
      : status.reason === 'cancelled'
        ? `the job was cancelled outside Flywheel (exit code ${status.exitCode})`
        : `the trainer exited with code ${status.exitCode}`;
  return { status: 'failed', error };
}

/** Records the run's end (its checkpoints, `rows`, with it); priced and its slot freed in the same statement when runTraining follows it. */
async function record(
  deps: ActivityDepsWithDefaults,
  input: Followed,
  outcome: TrainingOutcome,
  stderrTail?: string,
  trainerSeconds?: number,
  rows: NewCheckpoint[] = [],
): Promise<TrainingOutcome> {
  const launches = countLaunches(input.handle.runDir);
  const endedAt = new Date(deps.clock.now());
  const { known } = input;
  const cost = known && trainingCostRow(known.campaign.spec, costOf(input, known.campaign, known.startedAt, endedAt, trainerSeconds));
  const basis = await recordRunEnd(
    deps.db,
    input.runId,
    {
      status: outcome.status,
      exitCode: outcome.exitCode ?? null,
      stderrTail: stderrTail ?? null,
      trainerSeconds: trainerSeconds ?? null,
      launches,
      endedAt,
    },
    { checkpoints: rows, cost, releaseSlot: known !== undefined },
  );
  if (!cost) await recordRunCost(deps, input, trainerSeconds, basis);
  return outcome;
}

/** What the run cost: the trainer's own seconds, or the run's launch-to-end span when it has none; Slurm's CPUs. */
function costOf(
  input: AwaitTrainingInput,
  campaign: { id: string; spec: CampaignSpec },
  startedAt: Date,
  endedAt: Date,
  trainerSeconds: number | undefined,
): TrainingCost {
  const { spec } = campaign;
  const seconds = trainerSeconds ?? Math.max(0, (endedAt.getTime() - startedAt.getTime()) / 1000);
  const slurm = spec.backend.kind === 'slurm' ? spec.backend.slurm : undefined;
  const cpus = slurm ? slurm.nodes * slurm.cpusPerTask : undefined;
  return { runId: input.runId, campaignId: campaign.id, backend: input.handle.backend, seconds, cpus };
}

/**
 * The run's ledger row, once: the trainer's own seconds, or the run's launch-to-end span when it has none. `basis`:
 * what recordRunEnd returned, when it has just recorded the end; read here otherwise.
 */
async function recordRunCost(
  deps: ActivityDepsWithDefaults,
  input: AwaitTrainingInput,
  trainerSeconds?: number,
  basis?: RunCostBasis,
): Promise<void> {
  const row = basis ?? (await runCostBasis(deps.db, input.runId));
  if (!row) return;
  const spec = await campaignOfRow(deps, row);
  const cost = costOf(input, { id: row.campaignId, spec }, row.startedAt, row.endedAt ?? new Date(deps.clock.now()), trainerSeconds);
  await recordTrainingCost(deps.db, spec, cost);
}

/** Launches the backend recorded in the run's launch directory (never the run directory: the trainer writes there). */
function countLaunches(runDir: string): number {
  try {
    return fs
      .readFileSync(path.join(launchDirOf(runDir), LAUNCHES_LOG), 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean).length;
  } catch {
    return 0;
  }
}
