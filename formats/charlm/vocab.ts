// Byte <-> token id mapping of the built-in code model: printable ASCII, \n and \t each get an id,
// every other byte shares one UNK id, and BOS pads the context before the start of a text.

/** Pads contexts that reach before the first byte; never a prediction target in training. */
export const BOS_ID = 0;
/** Every byte outside printable ASCII, \n and \t (UTF-8 continuation bytes included). */
export const UNK_ID = 1;
const TAB_ID = 2;
const NEWLINE_ID = 3;
const FIRST_PRINTABLE_ID = 4;
/** 95 printable bytes (0x20..0x7e) + \t + \n + UNK + BOS. */
export const VOCAB_SIZE = FIRST_PRINTABLE_ID + 95;

const byteToId = new Uint8Array(256).fill(UNK_ID);
for (let b = 0x20; b <= 0x7e; b++) byteToId[b] = FIRST_PRINTABLE_ID + b - 0x20;
byteToId[0x09] = TAB_ID;
byteToId[0x0a] = NEWLINE_ID;

/** The byte an id decodes to, or -1 for BOS and UNK (which have no single byte). */
export function idToByte(id: number): number {
  if (id === TAB_ID) return 0x09;
  if (id === NEWLINE_ID) return 0x0a;
  if (id >= FIRST_PRINTABLE_ID && id < VOCAB_SIZE) return 0x20 + id - FIRST_PRINTABLE_ID;
  return -1;
}

/** Token ids of the UTF-8 bytes of `text`: one id per byte, so bits-per-token is bits-per-byte. */
export function encodeText(text: string): Uint8Array {
  return encodeBytes(Buffer.from(text, 'utf8'));
}

export function encodeBytes(bytes: Uint8Array): Uint8Array {
  const ids = new Uint8Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) ids[i] = byteToId[bytes[i]];
  return ids;
}

/** Decodes ids that map to bytes; BOS and UNK are dropped (the model's output is ASCII). */
export function decodeIds(ids: ArrayLike<number>): string {
  let s = '';
  for (let i = 0; i < ids.length; i++) {
    const b = idToByte(ids[i]);
    if (b >= 0) s += String.fromCharCode(b);
  }
  return s;
}
