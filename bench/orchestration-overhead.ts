// Orchestration overhead per experiment: an `experiment` child workflow's wall time split, from its history, into the
// trainer's run, the public scoring (scoreCheckpoint: the campaign's warm predict server and grading), the wait for a capacity slot,
// and orchestration: everything else (activity dispatch, workflow tasks, the activities' own bookkeeping). Median and
// p95 over N experiments, for a trainer that does nothing and one that runs 1 s, PARALLEL at a time. After each case,
// in the same run, a peer: workflows making the same activity calls on the same pattern of task queues, each a no-op
// but for two sleeps as long as the case's median trainer and scoring times: what Temporal costs with no Flywheel work.
// PARALLEL defaults to CAPACITY (`backend.maxConcurrent`, its default unless given), so nothing waits for a slot;
// above it, experiments queue for a slot and the wait columns show for how long. Target: orchestration median < 150 ms, < 2% of a 10 s run.
// --inline: each case again with the experiments inline (innerLoop.experimentWorkflows), each timed on its own events
// in the loop's history (bench/lib/inline-events.ts) and set beside the same child-shaped peer; --warm-train: again
// inline with warm trainers (trainer.warmTrain).
// Run: node bin/run-ts.js bench/orchestration-overhead.ts [--inline] [--warm-train] [N] [PARALLEL] [CAPACITY] [SETTINGS]   (defaults 50,
// CAPACITY, and backend.maxConcurrent's default; SETTINGS: Temporal's settings for an A/B, as bench/lib/temporal-settings.ts reads them)
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { like } from 'drizzle-orm';
import { Worker } from '@temporalio/worker';
import type { temporal } from '@temporalio/proto';
import { parseSpec } from '../tasks/task-spec';
import { experiments, trainingRuns } from '../db/schema';
import { fixtureSpec } from '../test/helpers/specs';
import { quantile, startBenchStack, type BenchStack } from './lib/bench-stack';
import { activitySpans, timelineOf, type ActivitySpan, type SetApart } from './lib/history-timeline';
import { inlineExperimentEvents } from './lib/inline-events';
import type { RoundTripCall, roundTrips } from './lib/round-trip-workflow';
import { launchDirOf } from '../backends/run-dir-files';
import { runBench } from './lib/run-bench';
import { runNoopLoop, SHAPE_FLAGS, shapesOf, type ExperimentShape } from './lib/noop-campaign';
import { parseTemporalSettings, SETTINGS_USAGE, stackOptionsOf } from './lib/temporal-settings';

type Event = temporal.api.history.v1.IHistoryEvent;

const TARGET_MS = 150;
const TEN_S_RUN_MS = 10_000;
const TRAINER = 'trainer';
const SCORING = 'public scoring';
const WAIT = 'slot wait';
const REST = 'workflow tasks and the rest';

/** Where one workflow's wall time went (ms); `parts` splits its orchestration into activity queue and body times and the rest. */
interface Split {
  wall: number;
  trainer: number;
  scoring: number;
  wait: number;
  orchestration: number;
  parts: Record<string, number>;
  calls: ActivitySpan[];
  ownQueue: string;
}

const ran = (s: ActivitySpan | undefined, label: string): SetApart[] =>
  s?.startedMs !== undefined && s.endedMs !== undefined ? [{ label, fromMs: s.startedMs, toMs: s.endedMs }] : [];

/** Carves the intervals in `apart(spans)` out of the history's timeline; what is left is orchestration. */
function splitOf(events: Event[], apart: (spans: ActivitySpan[]) => SetApart[]): Split {
  const calls = activitySpans(events);
  const tl = timelineOf(events, apart(calls));
  const { [TRAINER]: trainer = 0, [SCORING]: scoring = 0, [WAIT]: wait = 0, ...parts } = tl.parts;
  return {
    wall: tl.totalMs,
    trainer,
    scoring,
    wait,
    orchestration: tl.totalMs - trainer - scoring - wait,
    parts,
    calls,
    ownQueue: events[0]?.workflowExecutionStartedEventAttributes?.taskQueue?.name ?? '',
  };
}

/** The trainer's start and end (epoch ms) from the launcher's stamps in its launch dir, when it has ended. */
function trainerSpan(runDir: string | undefined): [number, number] | undefined {
  if (!runDir || !fs.existsSync(path.join(launchDirOf(runDir), 'ended_at'))) return undefined;
  const stamp = (f: string) => Number(fs.readFileSync(path.join(launchDirOf(runDir), f), 'utf8').trim()) * 1000;
  return [stamp('started_at'), stamp('ended_at')];
}

/**
 * The spans during which an experiment held a capacity slot: from each acquire's grant to its release, or, where one
 * runTraining does both (FEWER_ROUND_TRIPS), from its trainer's start (the grant is a launch earlier) to its end.
 */
function holdsOf(spans: ActivitySpan[], runDir: string | undefined): Array<[number, number]> {
  const holds: Array<[number, number]> = [];
  spans.forEach((s, i) => {
    const release = spans.slice(i + 1).find((r) => r.type === 'releaseCapacity');
    if (s.type === 'acquireCapacity' && s.endedMs !== undefined && release?.endedMs !== undefined) holds.push([s.endedMs, release.endedMs]);
  });
  const run = spans.find((s) => s.type === 'runTraining');
  const trainer = trainerSpan(runDir);
  if (run?.endedMs !== undefined && trainer) holds.push([trainer[0], run.endedMs]);
  return holds;
}

/** The pieces of [from, to] during which at least `capacity` of the others' holds were in force: every slot taken. */
function fullPieces(from: number, to: number, others: Array<[number, number]>, capacity: number): SetApart[] {
  const cuts = [...new Set([from, to, ...others.flat().filter((t) => t > from && t < to)])].sort((a, b) => a - b);
  const pieces: SetApart[] = [];
  for (let i = 0; i + 1 < cuts.length; i++) {
    const mid = (cuts[i] + cuts[i + 1]) / 2;
    if (others.filter(([a, b]) => a <= mid && mid < b).length >= capacity) pieces.push({ label: WAIT, fromMs: cuts[i], toMs: cuts[i + 1] });
  }
  return pieces;
}

/**
 * An experiment's intervals set apart: the trainer's run, from its run dir's stamps (`date +%s.%N` around the
 * trainer; it starts inside launchTraining, so orchestration that overlaps it is not overhead), the public scoring,
 * and the slot wait: the time its acquireCapacity ran while the other experiments held every slot. Not the recorded
 * `waitedSeconds`, which also counts the acquire's lookups (a new pool connection can take 0.2 s on this machine).
 */
function experimentApart(
  runDir: string | undefined,
  others: Array<[number, number]>,
  capacity: number,
): (spans: ActivitySpan[]) => SetApart[] {
  return (spans) => {
    const apart = ran(
      spans.find((s) => s.type === 'scoreCheckpoint'),
      SCORING,
    );
    const trainer = trainerSpan(runDir);
    if (trainer) apart.push({ label: TRAINER, fromMs: trainer[0], toMs: trainer[1] });
    for (const a of spans) {
      if (a.startedMs === undefined || a.endedMs === undefined) continue;
      if (a.type === 'acquireCapacity') apart.push(...fullPieces(a.startedMs, a.endedMs, others, capacity));
      // runTraining waits for its slot before it launches: the wait lies between its start and the trainer's.
      if (a.type === 'runTraining' && trainer) apart.push(...fullPieces(a.startedMs, trainer[0], others, capacity));
    }
    return apart;
  };
}

async function runCase(
  stack: BenchStack,
  name: string,
  sleepMs: number,
  n: number,
  parallel: number,
  capacity: number,
  shape: ExperimentShape = 'child',
): Promise<Split[]> {
  const inline = shape !== 'child';
  // The fixture trainer speaks `predict --serve`, as the built-in and hf trainers do by default.
  const wf = await runNoopLoop(stack, name, { n, parallel, capacity, warmPredict: true, shape, sleepMs });
  const rows = await stack.db.db
    .select()
    .from(experiments)
    .where(like(experiments.id, `${wf}/e%`));
  const runs = new Map(
    (
      await stack.db.db
        .select()
        .from(trainingRuns)
        .where(like(trainingRuns.experimentId, `${wf}/e%`))
    ).map((r) => [r.experimentId, r]),
  );
  const histories: Array<{ id: string; events: Event[]; holds: Array<[number, number]>; runDir: string | undefined }> = [];
  const inlineEvents = inline ? await loopInlineEvents(stack, wf) : undefined;
  for (const r of rows) {
    // A failed experiment (it skips scoring) would not be comparable; with the fixture trainer none should fail.
    if (r.status !== 'succeeded') throw new Error(`experiment ${r.id} ${r.status}: ${r.error ?? ''}`);
    const events = inlineEvents
      ? (inlineEvents.get(r.id) ?? [])
      : ((await stack.client.workflow.getHandle(r.id).fetchHistory()).events ?? []);
    if (events.length === 0) throw new Error(`experiment ${r.id}: no events of its own in ${wf}'s history`);
    const runDir = runs.get(r.id)?.runDir;
    histories.push({ id: r.id, events, holds: holdsOf(activitySpans(events), runDir), runDir });
  }
  return histories.map((h) =>
    splitOf(
      h.events,
      experimentApart(
        h.runDir,
        histories.filter((o) => o !== h).flatMap((o) => o.holds),
        capacity,
      ),
    ),
  );
}

/** The loop's inline experiments' own events (bench/lib/inline-events.ts), from a loop that did not continue as new. */
async function loopInlineEvents(stack: BenchStack, wf: string): Promise<Map<string, Event[]>> {
  const events = (await stack.client.workflow.getHandle(wf).fetchHistory()).events ?? [];
  if (events.some((e) => e.workflowExecutionContinuedAsNewEventAttributes))
    throw new Error(`${wf} continued as new: run fewer experiments per case`);
  return inlineExperimentEvents(events);
}

interface Peer {
  /** n peer workflows, `parallel` at a time, mirroring `model`'s calls with the given trainer and scoring sleeps. */
  run(tag: string, trainerMs: number, scoringMs: number, n: number, parallel: number): Promise<Split[]>;
  stop(): Promise<void>;
}

/** Workers for the peer: one per task queue the model experiment used, its own queue running the workflows. */
async function startPeer(stack: BenchStack, model: Split): Promise<Peer> {
  const names = new Map([[model.ownQueue, `${stack.prefix}-rt-0`]]);
  for (const c of model.calls) if (!names.has(c.taskQueue)) names.set(c.taskQueue, `${stack.prefix}-rt-${names.size}`);
  const own = names.get(model.ownQueue)!;
  const trainerAt = model.calls.findIndex((c) => c.type === 'awaitTraining' || c.type === 'runTraining');
  const scoringAt = model.calls.findIndex((c) => c.type === 'scoreCheckpoint');
  const workers = await Promise.all(
    [...names.values()].map((taskQueue) =>
      Worker.create({
        connection: stack.connection,
        taskQueue,
        activities: { pause: (ms: number) => sleep(ms) },
        ...(taskQueue === own ? { workflowsPath: require.resolve('./lib/round-trip-workflow') } : {}),
      }),
    ),
  );
  const running = workers.map((w) => w.run());
  return {
    async run(tag, trainerMs, scoringMs, n, parallel) {
      const calls: RoundTripCall[] = model.calls.map((c, i) => ({
        taskQueue: names.get(c.taskQueue)!,
        sleepMs: i === trainerAt ? trainerMs : i === scoringAt ? scoringMs : 0,
      }));
      const ids = Array.from({ length: n }, (_, i) => `round-trip-${tag}-${i}`);
      let next = 0;
      const lane = async () => {
        while (next < ids.length) {
          const workflowId = ids[next++];
          await stack.client.workflow.execute<typeof roundTrips>('roundTrips', { taskQueue: own, workflowId, args: [calls] });
        }
      };
      await Promise.all(Array.from({ length: parallel }, lane));
      const splits: Split[] = [];
      for (const id of ids) {
        const events = (await stack.client.workflow.getHandle(id).fetchHistory()).events ?? [];
        splits.push(
          splitOf(events, (spans) => [
            ...(trainerMs > 0 ? ran(spans[trainerAt], TRAINER) : []),
            ...(scoringMs > 0 ? ran(spans[scoringAt], SCORING) : []),
          ]),
        );
      }
      return splits;
    },
    async stop() {
      workers.forEach((w) => w.shutdown());
      await Promise.allSettled(running);
    },
  };
}

const med = (xs: number[]) => quantile(xs, 0.5);
const p95 = (xs: number[]) => quantile(xs, 0.95);
const ms = (x: number, w: number) => x.toFixed(0).padStart(w);

/** One table row: orchestration, scoring, wait, wall less trainer, trainer, and the ratios. */
function row(label: string, splits: Split[]): string {
  const of = (f: (s: Split) => number) => splits.map(f);
  const orch = of((s) => s.orchestration);
  return [
    label.padEnd(25),
    ms(med(orch), 9),
    ms(p95(orch), 8),
    ms(med(of((s) => s.scoring)), 11),
    ms(med(of((s) => s.wait)), 8),
    ms(p95(of((s) => s.wait)), 8),
    ms(med(of((s) => s.wall - s.trainer)), 16),
    (med(of((s) => s.trainer)) / 1000).toFixed(3).padStart(9),
    `${(med(orch) / TARGET_MS).toFixed(2)}x`.padStart(10),
    `${((med(of((s) => s.orchestration + s.scoring)) / TEN_S_RUN_MS) * 100).toFixed(2)}%`.padStart(12),
  ].join(' ');
}

/** The three kinds of orchestration time: waiting in a task queue, inside an activity, and between activities. */
function kinds(parts: Record<string, number>): Record<string, number> {
  const sum = (suffix: string) =>
    Object.entries(parts)
      .filter(([k]) => k.endsWith(suffix))
      .reduce((a, [, v]) => a + v, 0);
  return { 'dispatch (every .queued)': sum('.queued'), 'activity bodies (.running)': sum('.running'), [REST]: parts[REST] ?? 0 };
}

async function main(): Promise<void> {
  const { shapes, rest: argv } = shapesOf(process.argv);
  const n = Number(argv[2] ?? 50);
  // The capacity the spec allows: backend.maxConcurrent's default unless CAPACITY is given.
  const capacity = Number(argv[4] ?? parseSpec(fixtureSpec('capacity-probe', { steps: 1 })).backend.maxConcurrent);
  const parallel = Number(argv[3] ?? capacity);
  const settings = parseTemporalSettings(argv[5]);
  if (![n, capacity, parallel].every((x) => Number.isInteger(x) && x > 0) || !settings) {
    console.error(
      `usage: bench/orchestration-overhead.ts ${SHAPE_FLAGS} [N] [PARALLEL] [CAPACITY] [SETTINGS]: positive integers; ${SETTINGS_USAGE}`,
    );
    process.exit(2);
  }
  const stack = await startBenchStack(undefined, stackOptionsOf(settings));
  let peer: Peer | undefined;
  try {
    const over = parallel > capacity ? `over-subscribed: ${parallel} in flight for ${capacity} slots` : 'nothing waits for a slot';
    console.log(`orchestration overhead: ${n} experiments per case, ${parallel} at a time, backend.maxConcurrent ${capacity} (${over})`);
    if (argv[5]) console.log(`Temporal settings: ${argv[5]}`);
    if (shapes.length > 1)
      console.log(
        "--inline (and --warm-train, inline with warm trainers): each case also with its experiments inline (coroutines of the loop's workflow, timed from the first runTraining's scheduling to the closing finishExperiment, or for a warm one whose runTraining recorded its end, to the workflow task that took it in); the peer is the same child-shaped one",
      );
    console.log(`2-core machine; one unreported loop of ${parallel} experiments and ${parallel} peer workflows first; ms per experiment`);
    console.log('orchestration = wall - trainer - public scoring - slot wait; overhead/10s = (orchestration + scoring) / a 10 s run');
    // Since SCORED_WITH_TRAINING a warm-trained experiment's scoring is inside its runTraining: no span to set apart.
    if (shapes.includes('warm'))
      console.log(
        "warm: its public scoring runs inside runTraining (no scoreCheckpoint of its own), so its orch_* columns include the scoring: compare its wall-trainer with the others' and the peer's",
      );
    console.log('');
    const warm = await runCase(stack, 'bench-warmup', 0, parallel, parallel, capacity);
    peer = await startPeer(stack, warm[0]);
    await peer.run('warmup', 0, 0, parallel, parallel);
    const k = warm[0].calls.length;
    const others = warm[0].calls.filter((c) => c.taskQueue !== warm[0].ownQueue).length;
    console.log(
      `peer: ${k} calls as an experiment makes them (${others} on other task queues, ${k - others} on its own), sleeping the case's median trainer and scoring times, no-op otherwise\n`,
    );
    console.log(
      'case                      orch_med orch_p95 scoring_med wait_med wait_p95 wall-trainer_med trainer_s orch/150ms overhead/10s',
    );
    const cases: Array<[string, Split[], Split[]]> = [];
    for (const [label, sleepMs] of [
      ['no-op trainer', 0],
      ['1 s trainer', 1000],
    ] as const) {
      const splits = await runCase(stack, `bench-${sleepMs}`, sleepMs, n, parallel, capacity);
      console.log(row(label, splits));
      for (const shape of shapes.slice(1))
        console.log(row(`  ${shape}`, await runCase(stack, `bench-${sleepMs}-${shape}`, sleepMs, n, parallel, capacity, shape)));
      const mirror = await peer.run(
        `${sleepMs}`,
        Math.round(med(splits.map((s) => s.trainer))),
        Math.round(med(splits.map((s) => s.scoring))),
        n,
        parallel,
      );
      console.log(row('  peer', mirror));
      cases.push([label, splits, mirror]);
    }
    for (const [label, splits, mirror] of cases) {
      const share = (med(mirror.map((s) => s.orchestration)) / med(splits.map((s) => s.orchestration))) * 100;
      console.log(`\nwhere orchestration goes, ${label}: median ms per experiment (trainer, scoring, slot wait carved out)`);
      const keys = [...new Set(splits.flatMap((s) => Object.keys(s.parts)))];
      for (const key of keys) console.log(`  ${key.padEnd(36)} ${ms(med(splits.map((s) => s.parts[key] ?? 0)), 6)}`);
      console.log(`  by kind ${''.padEnd(28)} ${'exp'.padStart(6)}   peer`);
      const mine = splits.map((s) => kinds(s.parts));
      const theirs = mirror.map((s) => kinds(s.parts));
      for (const g of Object.keys(mine[0] ?? {}))
        console.log(`    ${g.padEnd(34)} ${ms(med(mine.map((x) => x[g])), 6)} ${ms(med(theirs.map((x) => x[g])), 6)}`);
      console.log(`  the peer's orchestration median is ${share.toFixed(0)}% of the experiment's`);
    }
  } finally {
    await peer?.stop();
    await stack.stop();
  }
}

runBench(main);
