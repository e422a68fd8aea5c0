// Flywheel's held-out loss for Hugging Face checkpoints: runs formats/hf/score_loss.py, a process of the eval worker
// (never the trainee's code, never in the trainee's sandbox; in a sandbox of its own when the caller gives one, since
// it parses files a trainer wrote), on a frozen folder and the loss items, and reads back each item's bits and bytes. The items are written to a scratch folder of the eval activity's own, removed at the end.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ContractViolationError, FlywheelError } from '../../core/errors';

export const SCORE_LOSS_SCRIPT = path.join(__dirname, 'score_loss.py');

export interface HfLossItem {
  id: string;
  prompt: string;
  reference: string;
}

/** One item's cost: `bits` = −log2 p(reference | prompt) over its tokens, `bytes` = its UTF-8 bytes. */
export interface HfItemLoss {
  id: string;
  bits: number;
  bytes: number;
  /** The weights' dtype it was scored in. */
  dtype: HfScoreDtype;
}

/** The dtypes the scorer loads weights in. */
export type HfScoreDtype = 'float32' | 'bfloat16' | 'float16';

/**
 * The dtype every HF loss score is taken in, on the CPU and a GPU alike: scores are cached and compared across
 * checkpoints (the gate pairs a candidate's with production's), so they must not mix a CPU's float32 with a GPU's
 * bfloat16.
 */
export const HF_SCORE_DTYPE: HfScoreDtype = 'float32';

export interface HfScoreOptions {
  /** The hf-venv's interpreter (stack/hf-env.ts `hfPython`). */
  python: string;
  /** Where the items file lives while it is scored: a 0700 folder hidden from every trainer (predictScratchRoot). */
  scratchRoot: string;
  /** `auto` takes the GPU when torch sees one. @default "auto" */
  device?: 'auto' | 'cpu' | 'cuda';
  /** The weights' dtype while scoring, wherever it runs. @default HF_SCORE_DTYPE */
  dtype?: HfScoreDtype;
  /** @default 600000 */
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Runs the scorer isolated: given its argv, environment and the two paths it must see (the checkpoint, read-only;
   * its scratch folder, read-write), the command to run instead (the eval activity's sandbox). @default as it is
   */
  isolate?: (cmd: { argv: string[]; env: Record<string, string>; checkpoint: string; scratch: string }) => {
    argv: string[];
    env: Record<string, string>;
  };
}

/** A scorer process that failed for a reason a retry may not meet (killed, out of memory): retryable. */
export class HfScorerFailedError extends FlywheelError {}

/** Each item's bits and bytes, in the order given. */
export async function scoreHfLoss(checkpoint: string, items: HfLossItem[], o: HfScoreOptions): Promise<HfItemLoss[]> {
  const dir = fs.mkdtempSync(path.join(o.scratchRoot, 'loss-'));
  try {
    const itemsFile = path.join(dir, 'items.jsonl');
    const outFile = path.join(dir, 'losses.jsonl');
    fs.writeFileSync(itemsFile, items.map((i) => JSON.stringify({ id: i.id, prompt: i.prompt, reference: i.reference })).join('\n') + '\n');
    const args = [SCORE_LOSS_SCRIPT, '--checkpoint', checkpoint, '--items', itemsFile, '--out', outFile, '--device', o.device ?? 'auto'];
    args.push('--dtype', o.dtype ?? HF_SCORE_DTYPE);
    const plain = { argv: [o.python, ...args], env: scorerEnvironment() };
    const cmd = o.isolate ? o.isolate({ ...plain, checkpoint, scratch: dir }) : plain;
    await new Promise<void>((resolve, reject) => {
      execFile(
        cmd.argv[0],
        cmd.argv.slice(1),
        { cwd: dir, env: cmd.env, timeout: o.timeoutMs ?? 600_000, maxBuffer: 16 << 20, signal: o.signal },
        (err, _out, stderr) => {
          if (!err) return resolve();
          const last = stderr.trim().split('\n').pop() ?? '';
          // Exit 2: the folder is not one Flywheel loads (code, pickled weights, no safetensors): the trainer's fault.
          if (err.code === 2) reject(new ContractViolationError(`Flywheel's HF scorer refused ${checkpoint}: ${last}`));
          else
            reject(
              new HfScorerFailedError(
                `Flywheel's HF scorer failed on ${checkpoint} (${err.killed ? 'killed at its time limit' : `exit ${err.code}`}): ${last}`,
              ),
            );
        },
      );
    });
    return readLosses(outFile, items, o.dtype ?? HF_SCORE_DTYPE);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The worker's own locale, thread and GPU settings; the hub off. Nothing else of the worker's environment. */
function scorerEnvironment(): Record<string, string> {
  const keep = /^(PATH|HOME|LANG|LC_[A-Z]+|TMPDIR|OMP_NUM_THREADS|MKL_NUM_THREADS|CUDA_VISIBLE_DEVICES)$/;
  const env: Record<string, string> = { HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1', TOKENIZERS_PARALLELISM: 'false' };
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && keep.test(k)) env[k] = v;
  return env;
}

function readLosses(file: string, items: HfLossItem[], dtype: HfScoreDtype): HfItemLoss[] {
  const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const out = lines.map((l) => JSON.parse(l) as HfItemLoss);
  if (out.length !== items.length || out.some((r, i) => r.id !== items[i].id || !Number.isFinite(r.bits)))
    throw new HfScorerFailedError(`Flywheel's HF scorer wrote ${out.length} losses for ${items.length} items, or a non-finite one`);
  const other = out.find((r) => r.dtype !== dtype);
  if (other) throw new HfScorerFailedError(`Flywheel's HF scorer scored item "${other.id}" in ${other.dtype}, asked for ${dtype}`);
  return out;
}
