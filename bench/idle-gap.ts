// Accelerator idle time between consecutive experiments on one slot: an inner loop with parallelism 1 on the
// fixture trainer; for each pair of consecutive runs, the gap from one trainer's end to the next trainer's first
// metric line (the launch dir's `ended_at` stamp to the metrics file's first write). Target: < 2 s on local and Slurm.
// Run: node bin/run-ts.js bench/idle-gap.ts [EXPERIMENTS]   (default 6; Slurm and Ray only when they answer)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { like } from 'drizzle-orm';
import { trainingRuns } from '../db/schema';
import { fixtureSpec } from '../test/helpers/specs';
import { quantile, startBenchStack } from './lib/bench-stack';
import { registerCampaignVersion } from '../services/campaigns/campaign-versions';
import { launchDirOf } from '../backends/run-dir-files';
import { runBench } from './lib/run-bench';

const answers = (cmd: string, args: string[]) => {
  try {
    execFileSync(cmd, args, { stdio: 'ignore', timeout: 5000 });
    return true;
  } catch {
    return false;
  }
};

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 6);
  const stack = await startBenchStack(55492);
  try {
    const only = process.env.IDLE_GAP_BACKENDS?.split(',');
    const kinds = [
      'local',
      ...(answers('scontrol', ['ping']) ? ['slurm'] : []),
      ...(answers('curl', ['-sf', 'http://127.0.0.1:8265/api/version']) ? ['ray'] : []),
    ];
    if (only) kinds.splice(0, kinds.length, ...kinds.filter((k) => only.includes(k)));
    console.log(`idle gap between consecutive experiments on one slot: ${n} experiments, parallelism 1 (2-core machine)`);
    console.log('backend   median_s   p95_s   max_s   (end of one trainer → first metric of the next)');
    for (const kind of kinds) {
      const name = `idle-${kind}-${Date.now().toString(36)}`; // unique: a cluster keeps jobs of earlier runs under their ids
      const wf = `${name}/inner/1`;
      const spec = {
        ...fixtureSpec(name, { steps: 5 }, { budget: { experiments: n, parallelism: 1 }, batchSize: n, plateau: { patience: 1000 } }),
        backend: { kind, maxConcurrent: 2 },
      };
      try {
        await (
          await stack.client.workflow.start('innerLoop', {
            taskQueue: `${stack.prefix}-orchestration`,
            workflowId: wf,
            args: [{ campaignVersionId: (await registerCampaignVersion(stack.db.db, spec)).versionId }],
          })
        ).result();
      } catch (e) {
        let c: unknown = e;
        while ((c as { cause?: unknown }).cause) c = (c as { cause: unknown }).cause;
        console.log(`${kind.padEnd(9)} failed: ${(c as Error).message}`);
        continue;
      }
      const runs = (
        await stack.db.db
          .select()
          .from(trainingRuns)
          .where(like(trainingRuns.experimentId, `${wf}/e%`))
      ).sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime());
      const gaps: number[] = [];
      for (let i = 1; i < runs.length; i++) {
        const end = Number(fs.readFileSync(path.join(launchDirOf(runs[i - 1].runDir), 'ended_at'), 'utf8'));
        const firstMetric = fs.statSync(path.join(runs[i].runDir, 'metrics.jsonl')).birthtimeMs / 1000;
        gaps.push(firstMetric - end);
        if (process.env.IDLE_GAP_DEBUG)
          console.log(
            `  ${runs[i - 1].id} ended ${end.toFixed(3)}; ${runs[i].id} launched ${(runs[i].startedAt.getTime() / 1000).toFixed(3)}, started ${fs.readFileSync(path.join(launchDirOf(runs[i].runDir), 'started_at'), 'utf8').trim()}, first metric ${firstMetric.toFixed(3)}`,
          );
      }
      console.log(
        `${kind.padEnd(9)} ${quantile(gaps, 0.5).toFixed(2).padStart(8)} ${quantile(gaps, 0.95).toFixed(2).padStart(7)} ${Math.max(...gaps)
          .toFixed(2)
          .padStart(7)}`,
      );
    }
  } finally {
    await stack.stop();
  }
}

runBench(main);
