// The inner loop steered by a stream of setBudget updates while its experiments run: many replies land in the same
// workflow task as a proposal batch or a child's result, and the loop's next command must keep its place after them.
// Its history (inner-loop-updates.json in test/histories/) is the replay suite's guard on that order: a step that
// awaits one more microtask before it schedules (an `async` wrapper around proposeBatch, say) fails to replay it.
import { setBudgetUpdate } from '../../contracts/inner-loop';
import { loopHarness, type LoopHarness, type LoopWorkers } from '../helpers/loop-harness';
import { saveHistory } from '../helpers/histories';
import { fixtureSpec, uniqueName } from '../helpers/specs';

let harness: LoopHarness;
let workers: LoopWorkers;
beforeAll(async () => {
  harness = await loopHarness('update-order');
  workers = await harness.workers('t-uord');
});
afterAll(() => harness?.close());

test('a loop answers a stream of budget updates and finishes its budget', async () => {
  const id = uniqueName('updates');
  const h = await workers.startLoop(
    id,
    fixtureSpec(id, { steps: 2 }, { budget: { experiments: 4, parallelism: 2 }, batchSize: 2, plateau: { patience: 10 } }),
  );
  let done = false;
  const result = h.result().finally(() => (done = true));
  let sent = 0;
  while (!done) {
    // Refused while the loop prepares or once it has ended; each accepted one is a reply in the history.
    await Promise.all(
      [0, 1].map(() => h.executeUpdate(setBudgetUpdate, { args: [{ parallelism: 1 + (sent++ % 2) }] }).catch(() => undefined)),
    );
  }
  expect((await result).experiments).toBe(4);
  expect(saveHistory('inner-loop-updates', h.workflowId)).toBeGreaterThan(20);
});
