// The reference PyTorch trainer as a campaign's trainer on the cluster backends (a real one-node Slurm and a real
// local Ray head, started by .ci/start-slurm.sh and .ci/start-ray.sh): the campaign completes, each experiment is one
// job on that backend, trained to its last step on the CPU, with torch-gpt-v1 checkpoints scored on the public split.
import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { checkpoints, experiments, trainingRuns } from '../../db/schema';
import { loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { eachBackend, requires } from '../helpers/requires';
import { sandboxAvailable } from '../helpers/sandbox';
import { torchSpec, uniqueName } from '../helpers/specs';
import { launchDirOf } from '../../backends/run-dir-files';

requires('torch');

const STEPS = 50;
let harness: LoopHarness;
beforeAll(async () => {
  process.env.FLYWHEEL_TORCH_THREADS = '1';
  harness = await loopHarness('torch-cluster');
});
afterAll(async () => {
  delete process.env.FLYWHEEL_TORCH_THREADS;
  await harness?.close();
});

eachBackend(['slurm', 'ray'])(
  'a torch campaign completes on the %s backend',
  async (kind) => {
    const workers = await harness.workers(`t-torch-${kind}`);
    try {
      const id = uniqueName(`torch-${kind}`);
      const wf = `${id}/inner/1`;
      const result = await (await workers.startLoop(id, { ...torchSpec(id, [0.01], STEPS), backend: { kind } })).result();
      expect(result.best?.experimentId).toBe(`${wf}/e0`);
      const [run] = await harness.db.db
        .select()
        .from(trainingRuns)
        .where(eq(trainingRuns.experimentId, `${wf}/e0`));
      expect(run).toMatchObject({ backend: kind, status: 'succeeded', exitCode: 0, launches: 1 });
      // On Slurm the job runs the trainer in the bubblewrap sandbox, as the local backend does; Ray runs it in the
      // cluster's own container with the environment allow-list.
      const isolation = JSON.parse(fs.readFileSync(path.join(launchDirOf(run.runDir), 'isolation.json'), 'utf8')) as { sandbox: string };
      expect(isolation.sandbox).toBe(kind === 'slurm' ? (sandboxAvailable ? 'bubblewrap' : 'none') : 'cluster');
      // Sandboxed under a worker that is root, the job's trainer ran as a host uid of its own: what it wrote is not root's.
      if (isolation.sandbox === 'bubblewrap' && process.getuid?.() === 0)
        expect(fs.statSync(path.join(run.runDir, 'metrics.jsonl')).uid).not.toBe(0);
      const steps = fs
        .readFileSync(path.join(run.runDir, 'metrics.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { step: number }).step);
      expect(steps[steps.length - 1]).toBe(STEPS);
      const ckpts = await harness.db.db
        .select()
        .from(checkpoints)
        .where(eq(checkpoints.experimentId, `${wf}/e0`));
      expect(ckpts.map((c) => c.format)).toContain('torch-gpt-v1');
      const [exp] = await harness.db.db
        .select()
        .from(experiments)
        .where(eq(experiments.id, `${wf}/e0`));
      expect(exp.publicScore).not.toBeNull();
    } finally {
      await workers.stop();
    }
  },
  300_000,
);
