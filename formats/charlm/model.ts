// The built-in code model's public face: the model, its checkpoint format and the scoring functions.
// Import from here; each piece lives in its own file.
export { CharLm, layoutOf, type CharLmHyper, type CharLmLayout } from './char-lm';
export { CHARLM_FORMAT, CheckpointFormatError, decodeCheckpoint, encodeCheckpoint, type CharLmCheckpoint } from './checkpoint';
export { bitsPerByte, greedyComplete, scoreLossItems } from './score';
export { VOCAB_SIZE, encodeBytes, encodeText, decodeIds } from './vocab';
