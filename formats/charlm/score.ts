// Scoring and decoding with a frozen model, shared by the eval activity (held-out bits per byte) and the
// trainer's `predict` (greedy completions). Pure functions of the model and the text.
import type { CharLm } from './char-lm';
import { BOS_ID, UNK_ID, encodeText, idToByte } from './vocab';

/**
 * Total -log2 p(continuation | prompt) over the continuation's UTF-8 bytes, each byte conditioned on the prompt
 * and the continuation bytes before it (BOS before the prompt). `bits / bytes` is bits per byte.
 */
export function bitsPerByte(model: CharLm, prompt: string, continuation: string): { bits: number; bytes: number } {
  const p = encodeText(prompt);
  const c = encodeText(continuation);
  const ids = new Uint8Array(p.length + c.length);
  ids.set(p);
  ids.set(c, p.length);
  return { bits: model.crossEntropy(ids, p.length, ids.length) / Math.LN2, bytes: c.length };
}

/**
 * The most likely next `maxBytes` bytes after `prompt`, one argmax at a time. Stops early if the best token
 * is UNK or BOS (no byte to emit), so the completion is always printable ASCII, \n or \t.
 */
export function greedyComplete(model: CharLm, prompt: string, maxBytes: number): string {
  const p = encodeText(prompt);
  const ids = new Uint8Array(p.length + Math.max(0, maxBytes));
  ids.set(p);
  let out = '';
  for (let i = p.length; i < ids.length; i++) {
    const lp = model.nextLogProbs(ids, i);
    let best = 0;
    for (let v = 1; v < lp.length; v++) if (lp[v] > lp[best]) best = v;
    if (best === UNK_ID || best === BOS_ID) break;
    ids[i] = best;
    out += String.fromCharCode(idToByte(best));
  }
  return out;
}

/**
 * Byte-weighted bits per byte of `items` (each reference scored after its prompt), and each item's own figure.
 * The one definition the eval activity and the benches share. Empty input scores 0.
 */
export function scoreLossItems(
  model: CharLm,
  items: ReadonlyArray<{ prompt: string; reference: string }>,
): { bitsPerByte: number; perItem: number[] } {
  let bits = 0;
  let bytes = 0;
  const perItem = items.map((item) => {
    const r = bitsPerByte(model, item.prompt, item.reference);
    bits += r.bits;
    bytes += r.bytes;
    return r.bytes ? r.bits / r.bytes : 0;
  });
  return { bitsPerByte: bytes ? bits / bytes : 0, perItem };
}
