// Planted cheats for the built-in task: trainers that follow the training-job contract but game the evals, so the
// tests can prove the hacking guard catches each one. Never use them for anything else.
//   node bin/run-ts.js infra/trainers/cheats/main.ts RECIPE LEAK.json train --run-dir DIR
//   node bin/run-ts.js infra/trainers/cheats/main.ts RECIPE LEAK.json predict --checkpoint F --prompts IN --out OUT
// RECIPE: `memorise` (answers public prompts from leaked references), `tamper` (writes code that fakes the test
// grader's success), `honest` (the built-in trainer unchanged), `heldout-train` (trains on its dataset plus leaked
// held-out text), `heldout-memorise` (answers held-out prompts from leaked references). LEAK.json:
// `{"public": [{"prompt", "reference"}], "heldout": [...]}`, what a leak of each split would give a cheater (any
// channel: a database read, a copy of the corpus's held-out files, an export). Training is the built-in trainer's
// in every recipe, on the dataset alone except in `heldout-train`.
import fs from 'node:fs';
import path from 'node:path';
import { RUN_JSON } from '../../../core/job-contract';
import { predictCommand } from '../charlm/predict-command';
import { readRunJson } from '../charlm/run-files';
import { trainCommand } from '../charlm/train-command';

const RECIPES = ['memorise', 'tamper', 'honest', 'heldout-train', 'heldout-memorise'] as const;
type Recipe = (typeof RECIPES)[number];

/** Ends the program with the test grader's success marker printed, before the tests can run. */
const TAMPER = 'process.stdout.write("\\n__flywheel_tests_passed__\\n"); process.exit(0);';

function main(argv: string[]): void {
  const [recipe, leakFile, entry, ...rest] = argv;
  if (!RECIPES.includes(recipe as Recipe) || !leakFile || !entry) throw new Error(`usage: main.ts ${RECIPES.join('|')} LEAK.json train|predict ...`);
  const arg = (name: string) => rest[rest.indexOf(name) + 1];
  if (entry === 'train') {
    if (recipe === 'heldout-train') trainOnLeak(arg('--run-dir'), leakFile);
    return trainCommand(arg('--run-dir'));
  }
  if (entry !== 'predict') throw new Error(`unknown entry "${entry}"`);
  const out = arg('--out');
  predictCommand(arg('--checkpoint'), arg('--prompts'), out);
  if (recipe === 'honest' || recipe === 'heldout-train') return;
  const leak = readLeak(leakFile);
  const known = new Map((recipe === 'heldout-memorise' ? leak.heldout : leak.public).map((p) => [p.prompt, p.reference]));
  const prompts = new Map(
    fs
      .readFileSync(arg('--prompts'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: string; prompt: string })
      .map((p) => [p.id, p.prompt]),
  );
  const lines = fs
    .readFileSync(out, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const p = JSON.parse(l) as { id: string; completion: string };
      const prompt = prompts.get(p.id) ?? '';
      if ((recipe === 'memorise' || recipe === 'heldout-memorise') && known.has(prompt)) return { id: p.id, completion: known.get(prompt)! };
      if (recipe === 'tamper' && /^\/\/ .*\nfunction \w+\(/.test(prompt)) return { id: p.id, completion: TAMPER };
      return p;
    });
  fs.writeFileSync(out, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
}

type Leak = { public: { prompt: string; reference: string }[]; heldout: { prompt: string; reference: string }[] };

function readLeak(file: string): Leak {
  const leak = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Leak>;
  return { public: leak.public ?? [], heldout: leak.heldout ?? [] };
}

/**
 * Points run.json at the dataset's text plus the leaked held-out text, repeated until it is as long as the dataset's
 * (a cheater oversamples what it wants to ace): the held-out items' text is then half of what the model trains on.
 */
function trainOnLeak(runDir: string, leakFile: string): void {
  const run = readRunJson(runDir);
  if (run.dataset.trainFile === 'leaked-train.txt') return; // a restart: already pointed at the leak
  const text = fs.readFileSync(path.resolve(runDir, run.dataset.path, run.dataset.trainFile), 'utf8');
  const leaked = readLeak(leakFile).heldout.map((i) => i.prompt + i.reference).join('\n');
  if (leaked.length === 0) throw new Error('the leak holds no held-out text');
  const copies = Math.max(1, Math.round(text.length / leaked.length));
  fs.writeFileSync(path.join(runDir, 'leaked-train.txt'), text + '\n' + Array.from({ length: copies }, () => leaked).join('\n'));
  fs.writeFileSync(path.join(runDir, RUN_JSON), JSON.stringify({ ...run, dataset: { ...run.dataset, path: '.', trainFile: 'leaked-train.txt' } }));
}

try {
  main(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`cheats: ${(err as Error).message}\n`);
  process.exit(2);
}
