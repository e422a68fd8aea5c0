// Serving a Hugging Face checkpoint: completions/s and tokens/s of Flywheel's transformers server (formats/hf/serve.py)
// under concurrent clients, batched (--max-batch 8) beside unbatched (--max-batch 1) in the same run; then a
// promotion under the same load through the pool `flywheel serve` uses: requests answered by each checkpoint,
// failures, and the time from the promotion to the first reply of the new checkpoint.
// Run: node bin/run-ts.js bench/hf-serve.ts [--requests N] [--clients N] [--tokens N]
//   (FLYWHEEL_HF_PYTHON or $FLYWHEEL_HOME/hf-venv; a tiny Llama built here, no hub)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { resolveConfig } from '../core/config';
import { HfModelPool } from '../server/hf/hf-model-pool';
import { InferenceProcess } from '../server/hf/inference-process';
import { openAiComplete } from '../server/hf/openai-completions';
import { sha256Folder } from '../services/checkpoint-manifest';
import { hfPython } from '../stack/hf-env';
import { runBench } from './lib/run-bench';

const TINY_MODEL = path.join(__dirname, '..', 'trainers', 'hf', 'tiny_model.py');
const TEXT = Array.from({ length: 300 }, (_, i) => `export function f${i}(a, b) {\n  return a * ${i % 7} + b;\n}\n`).join('');
/** Users of one product send prompts of a few shapes; these four tokenize to the same length in pairs. */
const PROMPTS = ['export function f1', 'export function f2', 'return a * 3', 'return a * 5'];

function tinyModel(python: string, dir: string, seed: number): string {
  fs.writeFileSync(path.join(dir, 'text.txt'), TEXT);
  const out = path.join(dir, `model-${seed}`);
  execFileSync(
    python,
    [TINY_MODEL, '--out', out, '--text', path.join(dir, 'text.txt'), '--seed', String(seed), '--layers', '4', '--hidden', '128'],
    {
      stdio: 'ignore',
    },
  );
  return out;
}

/** `clients` loops, each sending its next request when the last answers, until `requests` have been answered. */
async function drive(clients: number, requests: number, send: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < requests) await send(next++);
    }),
  );
  return (performance.now() - t0) / 1000;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '96' },
      clients: { type: 'string', default: '8' },
      tokens: { type: 'string', default: '32' },
    },
  });
  const [requests, clients, tokens] = [Number(values.requests), Number(values.clients), Number(values.tokens)];
  const config = resolveConfig(process.env, process.cwd());
  const python = hfPython(config.home);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-serve-bench-'));
  try {
    const a = tinyModel(python, dir, 1);
    const b = tinyModel(python, dir, 2);
    console.log(`hf-serve: ${clients} clients, ${requests} requests of ${tokens} tokens, tiny Llama (4 layers, 128 wide), CPU`);
    for (const maxBatch of [1, 8]) {
      const p = await InferenceProcess.start({ python, engine: 'transformers', folder: a, name: 'bench', home: dir, maxBatch });
      try {
        await openAiComplete(p.url, { model: 'bench', prompt: PROMPTS[0], maxTokens: tokens }); // warm
        let generated = 0;
        const s = await drive(clients, requests, async (i) => {
          await openAiComplete(p.url, { model: 'bench', prompt: PROMPTS[i % PROMPTS.length], maxTokens: tokens });
          generated += tokens;
        });
        const stats = (await (await fetch(`${p.url}/stats`)).json()) as { batches: number; requests: number };
        console.log(
          `  --max-batch ${maxBatch}: ${(requests / s).toFixed(1)} completions/s, ~${(generated / s).toFixed(0)} tokens/s, ` +
            `${(stats.requests / stats.batches).toFixed(2)} requests per batch`,
        );
      } finally {
        await p.stop();
      }
    }
    const pool = new HfModelPool({ python, home: dir, engine: 'transformers', log: () => {} });
    try {
      const ckA = { id: 'bench/step-1', path: a, sha256: sha256Folder(a).sha256 };
      const ckB = { id: 'bench/step-2', path: b, sha256: sha256Folder(b).sha256 };
      await pool.complete('bench', ckA, PROMPTS[0], tokens);
      let production = ckA;
      let promotedAt = 0;
      let firstNew = 0;
      let failed = 0;
      const answered = new Map<string, number>();
      await drive(clients, requests * 2, async (i) => {
        if (i === requests / 2) ((production = ckB), (promotedAt = performance.now()));
        try {
          const r = await pool.complete('bench', production, PROMPTS[i % PROMPTS.length], tokens);
          answered.set(r.modelVersion, (answered.get(r.modelVersion) ?? 0) + 1);
          if (r.modelVersion === ckB.id && !firstNew) firstNew = performance.now();
        } catch {
          failed++;
        }
      });
      console.log(
        `  promotion under load: ${answered.get(ckA.id) ?? 0} answered by the old checkpoint, ${answered.get(ckB.id) ?? 0} by the new, ` +
          `${failed} failed; ${((firstNew - promotedAt) / 1000).toFixed(1)} s from the promotion to the new checkpoint's first reply (its load)`,
      );
    } finally {
      await pool.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main);
