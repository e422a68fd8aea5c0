// Training throughput of the built-in model (bytes and steps per second, wall and CPU) for the default
// configuration and the costliest corner of the search space, with the public split's bits per byte and
// exact-token accuracy before and after. Run: node bin/run-ts.js bench/charlm-throughput.ts [--quick]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildBuiltinCorpus, collectBuiltinCorpus } from '../tasks/builtin-code/corpus';
import { buildCompletionItems, buildLossItems } from '../tasks/builtin-code/eval-items';
import { BUILTIN_DEFAULT_PARAMS, BUILTIN_SEARCH_SPACE } from '../tasks/builtin-code/search-space';
import { COMPLETION_BUDGET, gradeExactToken } from '../core/graders';
import { CharLm, greedyComplete, scoreLossItems } from '../formats/charlm/model';
import { resolveTrainParams, trainCharLm } from '../trainers/charlm/train';
import type { Params } from '../core/spec';
import { runBench } from './lib/run-bench';

/** The search space's most expensive corner (widest, longest context), at a learning rate that trains. */
const high = (k: string): number => {
  const d = BUILTIN_SEARCH_SPACE[k];
  return d.type === 'categorical' ? NaN : d.high;
};
const LARGE: Params = { ...BUILTIN_DEFAULT_PARAMS, lr: 0.02, hidden: high('hidden'), context: high('context'), embed: high('embed') };

function score(model: CharLm, loss: ReturnType<typeof buildLossItems>, completions: ReturnType<typeof buildCompletionItems>) {
  let hits = 0;
  for (const item of completions) hits += gradeExactToken(greedyComplete(model, item.prompt, COMPLETION_BUDGET), item.reference);
  return { bitsPerByte: scoreLossItems(model, loss).bitsPerByte, exactToken: hits / completions.length };
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'charlm-bench-'));
  try {
    const manifest = await buildBuiltinCorpus(dir);
    const train = fs.readFileSync(path.join(dir, 'train.txt'));
    const pub = (await collectBuiltinCorpus()).splits.public;
    const loss = buildLossItems('public', pub, { count: 40, seed: 1 });
    const completions = buildCompletionItems('public', pub, { count: 200, seed: 1 });
    console.log(
      `corpus: train ${manifest.splits.train.bytes} B, public ${manifest.splits.public.bytes} B; ${loss.length} loss chunks, ${completions.length} completion items`,
    );

    for (const [name, params] of [
      ['default', BUILTIN_DEFAULT_PARAMS],
      ['large', quick ? { ...LARGE, steps: 200 } : LARGE],
    ] as const) {
      const p = resolveTrainParams(params);
      const cpu0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      const { model } = trainCharLm({ text: new Uint8Array(train), params, seed: 1 });
      const wall = Number(process.hrtime.bigint() - t0) / 1e9;
      const cpuUsed = process.cpuUsage(cpu0);
      const cpu = (cpuUsed.user + cpuUsed.system) / 1e6;
      const bytes = p.steps * p.batchSize;
      const before = score(CharLm.create(model.hyper, 1), loss, completions);
      const after = score(model, loss, completions);
      console.log(
        `${name.padEnd(8)} context=${p.context} embed=${p.embed} hidden=${p.hidden} batch=${p.batchSize} steps=${p.steps} lr=${p.lr}` +
          ` (${model.layout.total} parameters)\n` +
          `  train: ${wall.toFixed(2)} s wall, ${cpu.toFixed(2)} s CPU; ${(bytes / wall).toFixed(0)} bytes/s, ${(p.steps / wall).toFixed(0)} steps/s` +
          ` (per CPU second: ${(bytes / cpu).toFixed(0)} bytes/s)\n` +
          `  public bits/byte ${before.bitsPerByte.toFixed(3)} -> ${after.bitsPerByte.toFixed(3)}` +
          `; exact-token accuracy ${(100 * before.exactToken).toFixed(1)}% -> ${(100 * after.exactToken).toFixed(1)}%`,
      );
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main);
