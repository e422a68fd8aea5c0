// The `charlm-v1` checkpoint: everything a resumed run needs to continue bit-for-bit (weights, Adam moments,
// step, sampler RNG state) and everything the eval activity needs to score a frozen model (weights, hyper).
// Layout: the ASCII magic "charlm-v1\n", a uint32 LE header length, a JSON header, then Float32 LE sections.
import os from 'node:os';
import { layoutOf, type CharLmHyper } from './char-lm';
import { VOCAB_SIZE } from './vocab';
import { NonRetryableError } from '../../core/errors';

export const CHARLM_FORMAT = 'charlm-v1';
const MAGIC = Buffer.from(`${CHARLM_FORMAT}\n`, 'ascii');

export interface CharLmCheckpoint {
  hyper: CharLmHyper;
  /** Training steps completed. */
  step: number;
  params: Float32Array;
  /** Adam's moments, or null for a weights-only checkpoint. */
  adam: { m: Float32Array; v: Float32Array } | null;
  /** The training-window sampler's RNG state after `step` steps. */
  rngState: number;
  /** The trainer knobs of the run (informative, and checked on resume). @default {} */
  train?: Record<string, unknown>;
}

interface Header {
  format: string;
  hyper: CharLmHyper;
  vocab: number;
  step: number;
  rngState: number;
  paramCount: number;
  sections: string[];
  train: Record<string, unknown>;
}

/** Bytes that are not a readable `charlm-v1` checkpoint. */
export class CheckpointFormatError extends NonRetryableError {}

// Sections are written as the host's Float32Array bytes; every platform we run on is little-endian.
function assertLittleEndian(): void {
  if (os.endianness() !== 'LE') throw new CheckpointFormatError('charlm checkpoints are little-endian; this host is not');
}

export function encodeCheckpoint(c: CharLmCheckpoint): Buffer {
  assertLittleEndian();
  const sections = c.adam ? [c.params, c.adam.m, c.adam.v] : [c.params];
  const header: Header = {
    format: CHARLM_FORMAT,
    hyper: { context: c.hyper.context, embed: c.hyper.embed, hidden: c.hyper.hidden },
    vocab: VOCAB_SIZE,
    step: c.step,
    rngState: c.rngState >>> 0,
    paramCount: c.params.length,
    sections: c.adam ? ['params', 'adam.m', 'adam.v'] : ['params'],
    train: c.train ?? {},
  };
  let json = Buffer.from(JSON.stringify(header), 'utf8');
  // Pad the header with spaces so the weights start 4-byte aligned (valid JSON either way).
  const pad = (4 - ((MAGIC.length + 4 + json.length) % 4)) % 4;
  json = Buffer.concat([json, Buffer.alloc(pad, 0x20)]);
  const len = Buffer.alloc(4);
  len.writeUInt32LE(json.length, 0);
  return Buffer.concat([MAGIC, len, json, ...sections.map((s) => Buffer.from(s.buffer, s.byteOffset, s.byteLength))]);
}

export function decodeCheckpoint(buf: Buffer): CharLmCheckpoint {
  assertLittleEndian();
  if (buf.length < MAGIC.length + 4 || !buf.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new CheckpointFormatError(`not a ${CHARLM_FORMAT} checkpoint (bad magic)`);
  }
  const jsonLen = buf.readUInt32LE(MAGIC.length);
  const start = MAGIC.length + 4 + jsonLen;
  if (start > buf.length) throw new CheckpointFormatError('checkpoint header runs past the end of the file');
  let h: Header;
  try {
    h = JSON.parse(buf.subarray(MAGIC.length + 4, start).toString('utf8')) as Header;
  } catch {
    throw new CheckpointFormatError('checkpoint header is not JSON');
  }
  if (h.format !== CHARLM_FORMAT)
    throw new CheckpointFormatError(`checkpoint format is ${JSON.stringify(h.format)}, expected ${CHARLM_FORMAT}`);
  const hy = h.hyper as unknown as Record<string, unknown> | undefined;
  for (const k of ['context', 'embed', 'hidden']) {
    const v = hy?.[k];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
      throw new CheckpointFormatError(`checkpoint hyper.${k} is not a positive integer`);
  }
  if (h.vocab !== VOCAB_SIZE) throw new CheckpointFormatError(`checkpoint vocab is ${h.vocab}, this build has ${VOCAB_SIZE}`);
  const n = layoutOf(h.hyper).total;
  if (h.paramCount !== n) throw new CheckpointFormatError(`checkpoint has ${h.paramCount} parameters, its hyper needs ${n}`);
  const nSections = h.sections.length;
  if (buf.length !== start + nSections * n * 4) {
    throw new CheckpointFormatError(`checkpoint is ${buf.length} bytes, expected ${start + nSections * n * 4} (truncated?)`);
  }
  // Copy each section into its own ArrayBuffer: aligned, and independent of the file's buffer.
  const section = (i: number): Float32Array => {
    const bytes = new Uint8Array(n * 4);
    bytes.set(buf.subarray(start + i * n * 4, start + (i + 1) * n * 4));
    return new Float32Array(bytes.buffer);
  };
  const hasAdam = h.sections.includes('adam.m');
  return {
    hyper: h.hyper,
    step: h.step,
    params: section(0),
    adam: hasAdam ? { m: section(1), v: section(2) } : null,
    rngState: h.rngState,
    train: h.train,
  };
}
