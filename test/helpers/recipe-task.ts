// A task of its own for the code-experiment test, on which the reference PyTorch trainer's tiny CPU model gets public
// scores that tell a weak run from a good one and from a hurt one in seconds (the built-in code task's next-token items
// score 0 for every run of that size). Two kinds of prompt, each on a word of five random letters:
//   pair:<word>- and pair:<word>+, answered a and b: a bigram, which any training gets right, even at a learning rate
//     a hundred times too small (greedy decoding needs only the right logit on top, and a tiny model's logits start
//     near 0);
//   last:<word>=, answered with the word's last letter: a copy through attention, which the model learns at lr 0.01
//     (constant) between 150 and 400 steps, and not at all at lr 1e-4.
// So 150 steps pass a little over half the items, 600 with a warm-up nearly all of them, and 150 at lr 1e-4 half at
// most. Measured offline with trainers/torch on 1 thread (d_model 32, one layer, batch 8, constant lr 0.01; seeds 1000
// to 1003), `last` items right of 15: after 150 steps 6, 5, 2, 5; at step 600 of 800 with an 80-step warm-up 14,
// 15, 15 (seeds 1001 to 1003); at lr 1e-4 or 3e-4, 0 at every checkpoint to 200 steps. The words make every prompt
// unique: a held-out prompt is a needle no other text holds by chance.
import fs from 'node:fs';
import path from 'node:path';
import { Rng } from '../../core/stream-rng';
import type { Db } from '../../db/client';
import { registerDataset } from '../../services/datasets/register-dataset';
import { registerEvalSuite } from '../../services/suites/register-suite';
import { exactItem } from './exact-items';

export interface RecipeTaskProblem {
  prompt: string;
  answer: string;
  category: 'pair' | 'last';
}

/** Training problems, and the public and held-out items, from one seeded stream; the kinds alternate. */
export function recipeTaskProblems(): { train: RecipeTaskProblem[]; publicItems: RecipeTaskProblem[]; heldoutItems: RecipeTaskProblem[] } {
  const rng = Rng.derive(37, 'recipe-task');
  let k = 0;
  const problem = (): RecipeTaskProblem => {
    const w = Array.from({ length: 5 }, () => String.fromCharCode(97 + rng.int(26))).join('');
    if (k++ % 2) return { prompt: `last:${w}=`, answer: w[w.length - 1], category: 'last' };
    return rng.int(2) ? { prompt: `pair:${w}-`, answer: 'a', category: 'pair' } : { prompt: `pair:${w}+`, answer: 'b', category: 'pair' };
  };
  const many = (n: number) => Array.from({ length: n }, problem);
  return { train: many(400), publicItems: many(30), heldoutItems: many(30) };
}

/**
 * Writes the task's dataset (train.jsonl) and suite (exact-match items, one byte each) under `dir`, registers both as
 * `name` (`flywheel dataset add` and `flywheel suite add` do the same) and returns the spec's `task` block and the
 * held-out prompts.
 */
export async function registerRecipeTask(
  db: Db,
  home: string,
  dir: string,
  name: string,
): Promise<{ task: { kind: 'custom'; dataset: string; suite: string }; heldoutPrompts: string[] }> {
  const { train, publicItems, heldoutItems } = recipeTaskProblems();
  fs.mkdirSync(dir, { recursive: true });
  const dataset = path.join(dir, 'train.jsonl');
  fs.writeFileSync(
    dataset,
    train.map((p) => JSON.stringify({ prompt: p.prompt, completion: `${p.answer}\n`, category: p.category })).join('\n') + '\n',
  );
  await registerDataset(db, name, dataset, { home });
  await registerEvalSuite(db, {
    name,
    items: [...publicItems.map((p, k) => exactItem('public', k, p, 1)), ...heldoutItems.map((p, k) => exactItem('heldout', k, p, 1))],
  });
  return { task: { kind: 'custom', dataset: name, suite: name }, heldoutPrompts: heldoutItems.map((p) => p.prompt) };
}
