// Flywheel's own held-out loss: for checkpoint formats Flywheel can read, the eval activity computes
// bits per byte itself from the frozen weights. The trainer is never asked to grade its own loss.
// charlm-v1 is read in this process; hf-causal-lm-v1 by formats/hf/score_loss.py, a process of the eval worker.
import fs from 'node:fs';
import { HF_CAUSAL_LM_FORMAT } from '../../core/job-contract';
import { CHARLM_FORMAT, CharLm, decodeCheckpoint, scoreLossItems } from '../../formats/charlm/model';
import { scoreHfLoss } from '../../formats/hf/score-loss';
import { predictScratchRoot } from '../../services/paths';
import { hfPython } from '../../core/trainer-program';

export interface LossItem {
  id: string;
  prompt: string;
  reference: string;
}

/** Per-item bits per byte, plus the byte-weighted mean over all items. */
export interface LossScores {
  perItem: Record<string, number>;
  bitsPerByte: number;
}

/** What a scorer may need of the eval worker: FLYWHEEL_HOME (the hf-venv lives there) and the activity's cancellation. */
export interface LossScorerContext {
  home: string;
  signal?: AbortSignal;
}

type LossScorer = (checkpoint: string, items: LossItem[], ctx: LossScorerContext) => Promise<LossScores>;

const SCORERS: Record<string, LossScorer> = {
  [CHARLM_FORMAT]: async (file, items) => {
    const ckpt = decodeCheckpoint(fs.readFileSync(file));
    const scores = scoreLossItems(CharLm.fromParams(ckpt.hyper, ckpt.params), items);
    return { perItem: Object.fromEntries(items.map((item, i) => [item.id, scores.perItem[i]])), bitsPerByte: scores.bitsPerByte };
  },
  [HF_CAUSAL_LM_FORMAT]: async (folder, items, ctx) => {
    const losses = await scoreHfLoss(folder, items, { python: hfPython(ctx.home), scratchRoot: predictScratchRoot(), signal: ctx.signal });
    let bits = 0;
    let bytes = 0;
    const perItem: Record<string, number> = {};
    for (const l of losses) {
      bits += l.bits;
      bytes += l.bytes;
      perItem[l.id] = l.bytes ? l.bits / l.bytes : 0;
    }
    return { perItem, bitsPerByte: bytes ? bits / bytes : 0 };
  },
};

/** The scorer for a checkpoint format, or undefined when Flywheel cannot read that format. */
export function lossScorerFor(format: string): LossScorer | undefined {
  return SCORERS[format];
}
