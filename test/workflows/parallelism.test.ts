// The inner loop's `parallelism` holds within a batch: proposals waiting for a place never start together.
import fs from 'node:fs';
import path from 'node:path';
import { launchDirOf } from '../../backends/run-dir-files';
import { like } from 'drizzle-orm';
import { trainingRuns } from '../../db/schema';
import { loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { fixtureSpec, uniqueName } from '../helpers/specs';

let h: LoopHarness;
beforeAll(async () => {
  h = await loopHarness('parallelism');
});
afterAll(() => h?.close());

test('parallelism 1 with a batch of 3: the three trainers run one after another', async () => {
  const w = await h.workers('t-par');
  const id = uniqueName('par');
  // Capacity slots allow 3 at once here, so only the loop's own parallelism can keep the runs apart.
  const spec = {
    ...fixtureSpec(id, { steps: 3, sleepMs: 600 }, { budget: { experiments: 3, parallelism: 1 }, batchSize: 3, plateau: { patience: 10 } }),
    backend: { kind: 'local', maxConcurrent: 3 },
  };
  await (await w.startLoop(id, spec)).result();
  const runs = await h.db.db
    .select()
    .from(trainingRuns)
    .where(like(trainingRuns.experimentId, `${id}/inner/1/e%`));
  expect(runs).toHaveLength(3);
  const spans = runs
    .map((r) => [
      Number(fs.readFileSync(path.join(launchDirOf(r.runDir), 'started_at'), 'utf8')),
      Number(fs.readFileSync(path.join(launchDirOf(r.runDir), 'ended_at'), 'utf8')),
    ])
    .sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < spans.length; i++) expect(spans[i][0]).toBeGreaterThanOrEqual(spans[i - 1][1]);
});
