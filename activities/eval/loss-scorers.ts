// Flywheel's own held-out loss: for checkpoint formats Flywheel can read, the eval activity computes
// bits per byte itself from the frozen weights. The trainer is never asked to grade its own loss.
import fs from 'node:fs';
import { CHARLM_FORMAT, CharLm, decodeCheckpoint, scoreLossItems } from '../../formats/charlm/model';

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
    const scores = scoreLossItems(CharLm.fromParams(ckpt.hyper, ckpt.params), items);
    return { perItem: Object.fromEntries(items.map((item, i) => [item.id, scores.perItem[i]])), bitsPerByte: scores.bitsPerByte };
  },
};

/** The scorer for a checkpoint format, or undefined when Flywheel cannot read that format. */
export function lossScorerFor(format: string): LossScorer | undefined {
  return SCORERS[format];
}
