// `node bin/run-ts.js tasks/arithmetic/main.ts --out DIR [--seed N] [--train N]`: writes the arithmetic task's
// train.jsonl and suite.json into DIR, ready for `flywheel dataset add` and `flywheel suite add`.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_SEED, writeArithmeticFiles } from './generate';

const USAGE = 'usage: node bin/run-ts.js tasks/arithmetic/main.ts --out DIR [--seed N] [--train N]';

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { out: { type: 'string' }, seed: { type: 'string' }, train: { type: 'string' } },
});
const seed = values.seed === undefined ? DEFAULT_SEED : Number(values.seed);
const train = values.train === undefined ? undefined : Number(values.train);
if (!values.out || !Number.isSafeInteger(seed) || (train !== undefined && !(Number.isInteger(train) && train >= 1))) {
  console.error(USAGE);
  process.exit(2);
}
const f = writeArithmeticFiles(path.resolve(values.out), seed, train === undefined ? {} : { train });
console.log(`${f.trainFile}: ${f.trainLines} lines\n${f.suiteFile}: ${f.suiteItems} items`);
