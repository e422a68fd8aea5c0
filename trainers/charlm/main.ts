// The built-in trainer program (training-job contract, see core/job-contract.ts):
//   node bin/run-ts.js trainers/charlm/main.ts train --run-dir DIR
//   node bin/run-ts.js trainers/charlm/main.ts predict --checkpoint FILE --prompts IN.jsonl --out OUT.jsonl
//   node bin/run-ts.js trainers/charlm/main.ts train --serve       (the warm training protocol: serve-train.ts)
//   node bin/run-ts.js trainers/charlm/main.ts predict --serve     (the warm protocol: serve-predict.ts)
//   node bin/run-ts.js trainers/charlm/main.ts describe            (its knobs, one JSON line: core/job-contract.ts)
// No SIGTERM handler on purpose: the default action ends the process at once, even inside the synchronous
// training loop, and every file it writes is a whole-line append or a rename, so nothing needs cleaning up.
import { parseArgs } from 'node:util';
import { CheckpointFormatError } from '../../formats/charlm/model';
import type { TrainerDescription } from '../../core/job-contract';
import { InvalidTrainParamsError, TrainingDivergedError, TrainingInputError } from './train';
import { DEFAULT_TRAIN_PARAMS } from './train-params';
import { predictCommand } from './predict-command';
import { servePredict } from './serve-predict';
import { serveTrain } from './serve-train';
import { TrainerError } from './run-files';
import { trainCommand } from './train-command';

const USAGE =
  'usage: main.ts train --run-dir DIR | train --serve | predict --checkpoint FILE --prompts IN.jsonl --out OUT.jsonl | predict --serve | describe';

function run(argv: string[]): void {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      'run-dir': { type: 'string' },
      checkpoint: { type: 'string' },
      prompts: { type: 'string' },
      out: { type: 'string' },
      serve: { type: 'boolean' },
    },
    strict: true,
  });
  if (command === 'describe' && rest.length === 0) return describe();
  if (command === 'train' && values['run-dir']) return trainCommand(values['run-dir']);
  if (command === 'train' && values.serve && rest.length === 1) {
    serveTrain().catch((err: Error) => fail(err));
    return;
  }
  if (command === 'predict' && values.serve && !values.checkpoint && !values.prompts && !values.out) {
    servePredict().catch((err: Error) => fail(err));
    return;
  }
  if (command === 'predict' && values.checkpoint && values.prompts && values.out) {
    return predictCommand(values.checkpoint, values.prompts, values.out);
  }
  throw new TrainerError(USAGE);
}

/** The `describe` entry point: every knob with its default (core/job-contract.ts TrainerDescription). */
function describe(): void {
  const knobs = Object.fromEntries(Object.entries(DEFAULT_TRAIN_PARAMS).map(([name, value]) => [name, { default: value }]));
  console.log(JSON.stringify({ knobs } satisfies TrainerDescription));
}

function fail(err: unknown): never {
  // Expected failures are one line; anything else is a bug in the trainer, so it keeps its stack.
  const known = [TrainerError, InvalidTrainParamsError, TrainingInputError, TrainingDivergedError, CheckpointFormatError].some(
    (c) => err instanceof c,
  );
  const usage = (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  console.error(`charlm: ${known || usage ? (err as Error).message : ((err as Error).stack ?? String(err))}`);
  process.exit(1);
}

try {
  run(process.argv.slice(2));
} catch (err) {
  fail(err);
}
