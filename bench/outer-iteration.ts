// The outer loop's own cost: the wall time of each outer iteration minus its inner loop's (claim, critiques, dataset
// version, gate scoring, bookkeeping), with a breakdown by activity, and the production model's held-out score after
// each iteration. Between iterations, synthetic users send N edits of the production model's outputs.
// Run: node bin/run-ts.js bench/outer-iteration.ts [ITERATIONS] [EXPERIMENTS] [FEEDBACK]   (defaults 3, 6 and 200)
import { storeFeedback } from '../services/feedback-store';
import { loadSpecFile } from '../cli/spec-file';
import { DEMO_SPEC } from '../cli/commands/demo';
import type { OuterLoopResult } from '../contracts/outer-loop';
import { startBenchStack } from './lib/bench-stack';
import { timelineOf } from './lib/history-timeline';
import { registerCampaignVersion } from '../services/campaigns/campaign-versions';
import { runBench } from './lib/run-bench';

async function main(): Promise<void> {
  const [iterations, experiments, feedback] = [3, 6, 200].map((d, i) => Number(process.argv[2 + i] ?? d));
  const stack = await startBenchStack(55491);
  const spec = loadSpecFile(DEMO_SPEC);
  spec.innerLoop.budget = { experiments, parallelism: 2 };
  try {
    console.log(
      `outer iterations of the demo campaign: ${experiments} experiments each, ${feedback} feedback events between iterations (2-core machine)`,
    );
    console.log('iter  status     total_s  inner_s  outer_only_s  heldout_bpb  dataset_examples');
    const parts: Record<string, number>[] = [];
    for (let i = 1; i <= iterations; i++) {
      if (i > 1) {
        const events = Array.from({ length: feedback }, (_, k) => ({
          id: `bench-i${i}-e${k}`,
          campaignId: spec.name,
          kind: 'edit' as const,
          modelVersion: `iteration-${i - 1}`,
          prompt: `function total${k}(items) {\n  return items.reduce((sum, item) => `,
          output: 'sum',
          correction: `sum + item.price * ${k % 7}, 0);\n}\n`,
        }));
        await storeFeedback(stack.db.db, events);
      }
      const h = await stack.client.workflow.start('outerLoop', {
        taskQueue: `${stack.prefix}-orchestration`,
        workflowId: `${spec.name}/outer/bench-${i}`,
        args: [
          { campaignId: spec.name, campaignVersionId: (await registerCampaignVersion(stack.db.db, spec)).versionId, trigger: 'bench' },
        ],
      });
      const r = (await h.result()) as OuterLoopResult;
      const s = r.iterations[r.iterations.length - 1];
      const d = await h.describe();
      const total = (d.closeTime!.getTime() - d.startTime.getTime()) / 1000;
      const inner = s.innerLoopId ? await stack.client.workflow.getHandle(s.innerLoopId).describe() : undefined;
      const innerS = inner ? (inner.closeTime!.getTime() - inner.startTime.getTime()) / 1000 : 0;
      const tl = timelineOf((await h.fetchHistory()).events ?? []);
      parts.push(tl.parts);
      const prod = s.heldout?.production;
      console.log(
        `${String(i).padStart(4)}  ${s.status.padEnd(9)} ${total.toFixed(1).padStart(8)} ${innerS.toFixed(1).padStart(8)} ${(total - innerS).toFixed(1).padStart(13)} ${(prod === undefined ? '-' : prod.toFixed(3)).padStart(12)} ${String(s.datasetExamples ?? '-').padStart(17)}`,
      );
    }
    console.log('\nwhere the outer-only time goes (ms per iteration; the inner loop child is in "workflow tasks and the rest"):');
    const keys = [...new Set(parts.flatMap((p) => Object.keys(p)))].sort();
    for (const k of keys) console.log(`  ${k.padEnd(40)} ${parts.map((p) => (p[k] ?? 0).toFixed(0).padStart(7)).join(' ')}`);
  } finally {
    await stack.stop();
  }
}

runBench(main);
