// A tiny Llama-architecture model for the Hugging Face suites, built by trainers/hf/tiny_model.py from a config and
// a tokenizer trained on the given text, saved as a folder that from_pretrained loads like a hub model.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { hfTestPythonPath } from './hf-python';

const TINY_MODEL = path.join(__dirname, '..', '..', 'trainers', 'hf', 'tiny_model.py');

export interface TinyHfModelOptions {
  /** The text the tokenizer is trained on (the task's own data). */
  text: string;
  /** @default 384 */
  vocabSize?: number;
  /** @default 2 */
  layers?: number;
  /** @default 64 */
  hidden?: number;
  /** @default 4 */
  heads?: number;
  /** @default 0 */
  seed?: number;
}

/** Builds the model into `dir` (created) and returns `dir`. */
export function makeTinyHfModel(dir: string, o: TinyHfModelOptions): string {
  fs.mkdirSync(dir, { recursive: true });
  const textFile = path.join(dir, '..', `${path.basename(dir)}.tokenizer-text.txt`);
  fs.writeFileSync(textFile, o.text);
  const args = [TINY_MODEL, '--out', dir, '--text', textFile];
  for (const [flag, v] of [
    ['--vocab-size', o.vocabSize],
    ['--layers', o.layers],
    ['--hidden', o.hidden],
    ['--heads', o.heads],
    ['--seed', o.seed],
  ] as const)
    if (v !== undefined) args.push(flag, String(v));
  execFileSync(hfTestPythonPath(), args, { stdio: ['ignore', 'ignore', 'pipe'] });
  fs.rmSync(textFile, { force: true });
  return dir;
}
