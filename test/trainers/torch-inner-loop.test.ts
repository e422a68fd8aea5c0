// One inner loop end to end on the local backend with the reference PyTorch trainer as the campaign's
// trainer: real dev server, PostgreSQL, python3 processes training tiny models on the CPU, predict scored by
// Flywheel's grader on the public split.
import fs from 'node:fs';
import path from 'node:path';
import { and, eq } from 'drizzle-orm';
import type { DbHandle } from '../../db/client';
import { checkpoints, evalResults, experiments, trainingRuns } from '../../db/schema';
import type { InnerLoopResult } from '../../contracts/inner-loop';
import { loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { requires } from '../helpers/requires';
import { sandboxAvailable } from '../helpers/sandbox';
import { torchSpec, uniqueName } from '../helpers/specs';
import { launchDirOf } from '../../backends/run-dir-files';

requires('torch');

const STEPS = 150;
let harness: LoopHarness;
let db: DbHandle;
const campaignId = uniqueName('torch-inner');
const workflowId = `${campaignId}/inner/1`;
let result: InnerLoopResult;

beforeAll(async () => {
  // The local backend and predict inherit the worker's environment: one thread per trainer process.
  process.env.FLYWHEEL_TORCH_THREADS = '1';
  harness = await loopHarness('torch-inner');
  db = harness.db;
  const workers = await harness.workers('t-torch');
  const handle = await workers.startLoop(campaignId, torchSpec(campaignId, [0.003, 0.01], STEPS));
  result = await handle.result();
}, 300_000);

afterAll(async () => {
  delete process.env.FLYWHEEL_TORCH_THREADS;
  await harness?.close();
});

test('the campaign completes with both experiments trained, succeeded and scored on the public split', async () => {
  expect(result.experiments).toBe(2);
  expect(result.stoppedBy).toBe('budget');
  const rows = (await db.db.select().from(experiments).where(eq(experiments.innerLoopId, workflowId))).filter(
    (e) => e.proposer !== 'baseline',
  );
  expect(rows.map((e) => e.id).sort()).toEqual([`${workflowId}/e0`, `${workflowId}/e1`]);
  for (const e of rows) {
    expect(e.status).toBe('succeeded');
    expect(e.publicScore).toBeGreaterThanOrEqual(0);
    expect(e.publicScore).toBeLessThanOrEqual(1);
    const scored = await db.db
      .select()
      .from(evalResults)
      .where(and(eq(evalResults.experimentId, e.id), eq(evalResults.split, 'public')));
    expect(scored).toHaveLength(1);
    expect(scored[0].itemCount).toBeGreaterThan(0);
    expect(scored[0].metrics.exact_match).toBe(e.publicScore);
    expect(scored[0].metrics.bits_per_byte).toBeUndefined(); // Flywheel cannot read a torch-gpt-v1 checkpoint itself
  }
  expect(result.best).toBeDefined();
  expect(rows.map((e) => e.id)).toContain(result.best!.experimentId);
  expect(result.heldout.best!.exact_match).toBeGreaterThanOrEqual(0);
  expect(result.heldout.baseline!.exact_match).toBeGreaterThanOrEqual(0);
});

test('each experiment ran the torch trainer to its last step, its loss falling, and left torch-gpt-v1 checkpoints', async () => {
  for (const id of [0, 1].map((i) => `${workflowId}/e${i}`)) {
    const [run] = await db.db.select().from(trainingRuns).where(eq(trainingRuns.experimentId, id));
    const lines = fs
      .readFileSync(path.join(run.runDir, 'metrics.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { step: number; loss: number });
    expect(lines[lines.length - 1].step).toBe(STEPS);
    expect(lines[lines.length - 1].loss).toBeLessThan(lines[0].loss);
    // Trained inside the sandbox (where the host can make one), and from it found its data and torch.
    expect(JSON.parse(fs.readFileSync(path.join(launchDirOf(run.runDir), 'isolation.json'), 'utf8'))).toEqual(
      sandboxAvailable ? { sandbox: 'bubblewrap' } : { sandbox: 'none', reason: 'trainer.unsandboxed is set' },
    );
    const ckpts = await db.db.select().from(checkpoints).where(eq(checkpoints.experimentId, id));
    expect(ckpts.length).toBeGreaterThan(0);
    for (const c of ckpts) expect(c.format).toBe('torch-gpt-v1');
  }
  // The baseline kept the fixed `steps: 0`: the untrained model, as for the built-in trainer.
  const baseline = await db.db
    .select()
    .from(checkpoints)
    .where(eq(checkpoints.experimentId, `${workflowId}/baseline`));
  expect(baseline.map((c) => c.step)).toEqual([0]);
});
