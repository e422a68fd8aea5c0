// A trainer that cannot start is found before anything is written: the inner loop's first step (checkTrainer, on the
// training worker) refuses a trainer whose program does not exist, with zero rows and no run directory, and the
// loop fails with that one-line reason, which is the workflow's failure (what the Temporal UI shows).
import fs from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import { loopHarness, type LoopHarness, type LoopWorkers } from '../helpers/loop-harness';
import { fixtureSpec, uniqueName } from '../helpers/specs';

let harness: LoopHarness;
let workers: LoopWorkers;

beforeAll(async () => {
  harness = await loopHarness('preflight');
  workers = await harness.workers('t-preflight');
});
afterAll(() => harness?.close());

const MISSING = 'flywheel-no-such-trainer';
const REASON = new RegExp(`^the trainer cannot start on the training worker \\(.+\\): trainer program "${MISSING}" was not found on PATH$`);

/** A campaign whose trainer program exists nowhere; everything else is the fixture trainer's spec. */
function missingTrainerSpec(name: string) {
  const spec = fixtureSpec(name, { steps: 5 });
  return { ...spec, trainer: { ...spec.trainer, command: [MISSING, '--flag'] } };
}

/** Rows in every table of the test's database (the migrations' own bookkeeping is in another schema). */
async function rowCounts(): Promise<Record<string, number>> {
  const { rows } = await harness.db.pool.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1");
  const out: Record<string, number> = {};
  for (const { table_name } of rows) out[table_name] = (await harness.db.pool.query(`SELECT count(*)::int AS n FROM "${table_name}"`)).rows[0].n;
  return out;
}

test('a trainer whose program does not exist is refused on the training worker before anything is written', async () => {
  const before = await rowCounts();
  expect(Object.keys(before).length).toBeGreaterThan(10);
  const name = uniqueName('missing');
  const h = await workers.startLoop(name, missingTrainerSpec(name));
  const err = await h.result().then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect((cause as ApplicationFailure).type).toBe('TrainerCannotStart');
  expect((cause as ApplicationFailure).nonRetryable).toBe(true);
  expect(cause?.message).toMatch(REASON);

  // Not a row, not a run directory: the check was the loop's one step, on the training queue.
  expect(await rowCounts()).toEqual(before);
  expect(fs.existsSync(path.join(harness.home, 'runs'))).toBe(false);
  const { events } = await h.fetchHistory();
  const scheduled = events!.flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes] : []));
  expect(scheduled.map((a) => [a.activityType?.name, a.taskQueue?.name])).toEqual([['checkTrainer', `${workers.prefix}-training`]]);
  // The workflow's failure, one line: what the Temporal UI shows for the execution.
  const failed = events!.find((e) => e.workflowExecutionFailedEventAttributes)!.workflowExecutionFailedEventAttributes!;
  expect(failed.failure?.message).toMatch(REASON);
});
