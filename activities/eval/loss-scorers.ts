// Flywheel's own held-out loss: for checkpoint formats Flywheel can read, the eval activity computes
// bits per byte itself from the frozen weights. The trainer is never asked to grade its own loss.
// charlm-v1 is read in this process; hf-causal-lm-v1 by formats/hf/score_loss.py, a process of the eval worker in a
// sandbox of its own.
import fs from 'node:fs';
import path from 'node:path';
import { ContractViolationError } from '../../core/errors';
import { HF_CAUSAL_LM_FORMAT } from '../../core/job-contract';
import { CHARLM_FORMAT, CharLm, decodeCheckpoint, scoreLossItems } from '../../formats/charlm/model';
import { HF_SCORE_DTYPE, SCORE_LOSS_SCRIPT, scoreHfLoss } from '../../formats/hf/score-loss';
import { isolate } from '../../backends/sandbox/sandbox';
import { predictScratchRoot } from '../../services/paths';
import { hfPython } from '../../backends/trainer-programs';
import { interpreterHome } from '../../core/trainer-program';

export interface LossItem {
  id: string;
  prompt: string;
  reference: string;
}

/** Per-item bits per byte, plus the byte-weighted mean over all items, and the dtype they were computed in. */
export interface LossScores {
  perItem: Record<string, number>;
  bitsPerByte: number;
  dtype: string;
}

/**
 * The one dtype each format's scorer computes in, wherever it runs: a comparison (the gate's candidate against
 * production, a seed rerun against its original) reads cached scores of several checkpoints, and scores of one
 * format are comparable only when they share it. charlm-v1 is scored in this process in JavaScript's float64.
 */
const LOSS_DTYPES: Record<string, string> = { [CHARLM_FORMAT]: 'float64', [HF_CAUSAL_LM_FORMAT]: HF_SCORE_DTYPE };

/**
 * Why a cached result's loss scores cannot be compared with scores taken now (recorded in another dtype, or with no
 * dtype, as HF results were before it was recorded: on a GPU they were the checkpoint's own), or undefined when they
 * can (no loss items, or the same dtype). charlm-v1 results recorded before the dtype was are float64 as now.
 */
export function staleLossDtype(
  format: string,
  result: { metrics: Record<string, number>; details: { lossDtype?: string } },
): string | undefined {
  const want = LOSS_DTYPES[format];
  if (result.metrics.bits_per_byte === undefined || want === undefined) return undefined;
  const had = result.details.lossDtype ?? (format === CHARLM_FORMAT ? want : undefined);
  return had === want ? undefined : `its loss was scored in ${had ?? 'an unrecorded dtype'}, not ${want}`;
}

/** What a scorer may need of the eval worker: FLYWHEEL_HOME (the hf-venv lives there) and the activity's cancellation. */
export interface LossScorerContext {
  home: string;
  signal?: AbortSignal;
}

type LossScorer = (checkpoint: string, items: LossItem[], ctx: LossScorerContext) => Promise<LossScores>;

/** The largest charlm-v1 checkpoint the eval worker parses: its models are a few MiB; a trainer's file may be anything. */
const MAX_CHARLM_CHECKPOINT = 256 << 20;

const SCORERS: Record<string, LossScorer> = {
  [CHARLM_FORMAT]: async (file, items) => {
    // Parsed in this process: a trainer's file, so no larger than any charlm model is (a few MiB).
    const size = fs.lstatSync(file).size;
    if (size > MAX_CHARLM_CHECKPOINT)
      throw new ContractViolationError(
        `${file}: a charlm-v1 checkpoint of ${size} bytes is over the ${MAX_CHARLM_CHECKPOINT >> 20} MiB cap`,
      );
    const ckpt = decodeCheckpoint(fs.readFileSync(file));
    const scores = scoreLossItems(CharLm.fromParams(ckpt.hyper, ckpt.params), items);
    return {
      perItem: Object.fromEntries(items.map((item, i) => [item.id, scores.perItem[i]])),
      bitsPerByte: scores.bitsPerByte,
      dtype: LOSS_DTYPES[CHARLM_FORMAT],
    };
  },
  [HF_CAUSAL_LM_FORMAT]: async (folder, items, ctx) => {
    const python = hfPython(ctx.home);
    const losses = await scoreHfLoss(folder, items, {
      python,
      scratchRoot: predictScratchRoot(),
      signal: ctx.signal,
      dtype: HF_SCORE_DTYPE,
      isolate: (cmd) => scorerSandbox(cmd, python, ctx.home),
    });
    let bits = 0;
    let bytes = 0;
    const perItem: Record<string, number> = {};
    for (const l of losses) {
      bits += l.bits;
      bytes += l.bytes;
      perItem[l.id] = l.bytes ? l.bits / l.bytes : 0;
    }
    return { perItem, bitsPerByte: bytes ? bits / bytes : 0, dtype: HF_SCORE_DTYPE };
  },
};

/**
 * Flywheel's HF scorer parses a trainer's files (safetensors, tokenizer and config JSON): it runs in a sandbox of its
 * own, like predict's but for Flywheel's code, with no network, the checkpoint read-only and its scratch read-write,
 * the hf-venv bound back over FLYWHEEL_HOME's mask, and a uid of its own. On a host with no sandbox it runs as it is,
 * like the built-in trainer: it is Flywheel's code.
 */
function scorerSandbox(
  cmd: { argv: string[]; env: Record<string, string>; checkpoint: string; scratch: string },
  python: string,
  home: string,
): { argv: string[]; env: Record<string, string> } {
  const isolated = isolate({
    argv: cmd.argv,
    env: cmd.env,
    cwd: cmd.scratch,
    code: [path.dirname(SCORE_LOSS_SCRIPT)],
    data: [cmd.checkpoint],
    readWrite: [cmd.scratch],
    hide: [home, predictScratchRoot()],
    unmasked: [interpreterHome(python)],
    network: false,
    unsandboxed: false,
    trusted: true,
    uidKey: cmd.scratch,
    limits: { processes: 1024, openFiles: 4096 },
  });
  return { argv: isolated.argv, env: isolated.env };
}

/** The scorer for a checkpoint format, or undefined when Flywheel cannot read that format. */
export function lossScorerFor(format: string): LossScorer | undefined {
  return SCORERS[format];
}
