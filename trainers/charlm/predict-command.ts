// `predict --checkpoint FILE --prompts IN.jsonl --out OUT.jsonl`: greedy completions from a frozen checkpoint,
// one `{id, completion}` line per prompt line, in order. The output appears whole (written, then renamed).
import fs from 'node:fs';
import type { PredictPrompt } from '../../core/job-contract';
import { CharLm, CheckpointFormatError, decodeCheckpoint, greedyComplete } from '../../formats/charlm/model';
import { TrainerError, writeAtomic } from './run-files';

export function predictCommand(checkpointFile: string, promptsFile: string, outFile: string): void {
  let model: CharLm;
  try {
    const c = decodeCheckpoint(fs.readFileSync(checkpointFile));
    model = CharLm.fromParams(c.hyper, c.params);
  } catch (err) {
    if (err instanceof CheckpointFormatError) throw new TrainerError(`${checkpointFile}: ${err.message}`);
    throw new TrainerError(`cannot read ${checkpointFile}: ${(err as Error).message}`);
  }
  let lines: string[];
  try {
    lines = fs
      .readFileSync(promptsFile, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '');
  } catch (err) {
    throw new TrainerError(`cannot read ${promptsFile}: ${(err as Error).message}`);
  }
  const out = lines.map((line, i) => {
    const p = parsePrompt(line, `${promptsFile}:${i + 1}`);
    return JSON.stringify({ id: p.id, completion: greedyComplete(model, p.prompt, p.maxBytes) }) + '\n';
  });
  writeAtomic(outFile, out.join(''));
}

function parsePrompt(line: string, where: string): PredictPrompt {
  let p: Partial<PredictPrompt>;
  try {
    p = JSON.parse(line) as Partial<PredictPrompt>;
  } catch {
    throw new TrainerError(`${where}: not JSON`);
  }
  if (typeof p.id !== 'string' || typeof p.prompt !== 'string') throw new TrainerError(`${where}: id and prompt must be strings`);
  if (typeof p.maxBytes !== 'number' || !Number.isInteger(p.maxBytes) || p.maxBytes < 0 || p.maxBytes > 65536) {
    throw new TrainerError(`${where}: maxBytes must be an integer from 0 to 65536`);
  }
  return p as PredictPrompt;
}
