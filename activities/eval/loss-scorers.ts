// Flywheel's own held-out loss: for checkpoint formats Flywheel can read, the eval activity computes
// bits per byte itself from the frozen weights. The trainer is never asked to grade its own loss.
import fs from 'node:fs';
import { CHARLM_FORMAT, CharLm, bitsPerByte, decodeCheckpoint } from '../../core/charlm/model';

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

type LossScorer = (checkpointFile: string, items: LossItem[]) => LossScores;

const SCORERS: Record<string, LossScorer> = {
  [CHARLM_FORMAT]: (file, items) => {
    const ckpt = decodeCheckpoint(fs.readFileSync(file));
    const model = CharLm.fromParams(ckpt.hyper, ckpt.params);
    const perItem: Record<string, number> = {};
    let bits = 0;
    let bytes = 0;
    for (const item of items) {
      const r = bitsPerByte(model, item.prompt, item.reference);
      perItem[item.id] = r.bytes ? r.bits / r.bytes : 0;
      bits += r.bits;
      bytes += r.bytes;
    }
    return { perItem, bitsPerByte: bytes ? bits / bytes : 0 };
  },
};

/** The scorer for a checkpoint format, or undefined when Flywheel cannot read that format. */
export function lossScorerFor(format: string): LossScorer | undefined {
  return SCORERS[format];
}
