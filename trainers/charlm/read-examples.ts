// Reads a dataset version's train.jsonl (run.json `dataset.examplesFile`) into an ExampleCorpus. The file is read
// whole as bytes and split on "\n" without ever becoming one string, and each example is kept only as token ids
// and three numbers, so memory is a few times the file's size (a 44 MB file of 500,000 lines peaks near 240 MB):
// fine for the tens of megabytes the built-in trainer is meant for; a file over 2 GiB cannot be read this way at all.
// Every line is checked with the one definition of a dataset line.
import fs from 'node:fs';
import { checkExampleLine } from '../../core/dataset/example-line';
import { ExampleCorpusBuilder, NoTrainableExamplesError, type ExampleCorpus } from './example-corpus';
import { TrainerError } from './run-files';

export function readExampleCorpus(file: string): ExampleCorpus {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (err) {
    throw new TrainerError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const builder = new ExampleCorpusBuilder();
  let line = 0;
  for (let start = 0; start < bytes.length;) {
    const nl = bytes.indexOf(0x0a, start);
    const end = nl < 0 ? bytes.length : nl;
    line += 1;
    const text = bytes.toString('utf8', start, end);
    start = end + 1;
    if (text.trim() === '') continue;
    builder.add(parseLine(text, `${file}:${line}`));
  }
  try {
    return builder.finish();
  } catch (err) {
    if (err instanceof NoTrainableExamplesError) throw new TrainerError(`${file}: ${err.message}`);
    throw err;
  }
}

function parseLine(text: string, where: string) {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new TrainerError(`${where}: not JSON`);
  }
  // `source` is the version's own field (where the example came from); the rest is a dataset line.
  if (raw && typeof raw === 'object' && !Array.isArray(raw) && 'source' in raw) {
    const { source, ...line } = raw as Record<string, unknown>;
    if (typeof source !== 'string') throw new TrainerError(`${where}: source: must be a string`);
    raw = line;
  }
  const checked = checkExampleLine(raw);
  if (!checked.example) throw new TrainerError(`${where}: ${checked.problems.join('; ')}`);
  return checked.example;
}
