// The built-in trainer inside the sandbox on the local backend and on Slurm (the one-node cluster of
// .ci/start-slurm.sh): the campaign completes, each run records that it ran in bubblewrap, and training lowered the
// loss, so the sandbox showed the trainer its checkout, its dataset version and its run directory.
import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { trainingRuns } from '../../db/schema';
import { loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { eachBackend, requires } from '../helpers/requires';
import { fastBuiltinSpec, uniqueName } from '../helpers/specs';
import { launchDirOf } from '../../backends/run-dir-files';

requires('bubblewrap');

let harness: LoopHarness;

describe('the built-in trainer in the sandbox', () => {
  beforeAll(async () => {
    harness = await loopHarness('builtin-sandbox');
  });
  afterAll(async () => {
    await harness?.close();
  });

  eachBackend(['local', 'slurm'])(
    'trains on the %s backend',
    async (kind) => {
      const workers = await harness.workers(`t-bsbx-${kind}`);
      try {
        const id = uniqueName(`bsbx-${kind}`);
        const spec = {
          ...fastBuiltinSpec(id, { innerLoop: { budget: { experiments: 1, parallelism: 1 }, batchSize: 1, startupTrials: 1 } }),
          backend: { kind },
        };
        const result = await (await workers.startLoop(id, spec)).result();
        expect(result.best?.experimentId).toBe(`${id}/inner/1/e0`);
        const [run] = await harness.db.db
          .select()
          .from(trainingRuns)
          .where(eq(trainingRuns.experimentId, `${id}/inner/1/e0`));
        expect(run).toMatchObject({ backend: kind, status: 'succeeded', exitCode: 0 });
        expect(JSON.parse(fs.readFileSync(path.join(launchDirOf(run.runDir), 'isolation.json'), 'utf8'))).toEqual({
          sandbox: 'bubblewrap',
        });
        const lines = fs
          .readFileSync(path.join(run.runDir, 'metrics.jsonl'), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { loss: number });
        expect(lines[lines.length - 1].loss).toBeLessThan(lines[0].loss);
      } finally {
        await workers.stop();
      }
    },
    300_000,
  );
});
