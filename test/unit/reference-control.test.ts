// Who trains the gate's seed reruns, the held-out leak check's reference model (core/gate/reference-control.ts): the
// task's reference trainer when it can retrain the recipe, else the incumbent's pinned trainer when its command differs
// from the candidate's, else the candidate's own, said plainly to be blind when that is code of the campaign's.
import { BLIND_REFERENCE, referenceTrainers, type ReferenceInputs, type TrainerBlock } from '../../core/gate/reference-control';
import { taskForSpec } from '../../services/task-registry';

/** A spec's trainer block with its defaults (core/spec.ts). */
const trainerOf = (trainer: Partial<TrainerBlock>): TrainerBlock => ({
  command: 'builtin',
  fixed: {},
  env: {},
  passEnv: [],
  readOnlyPaths: [],
  network: false,
  unsandboxed: false,
  ...trainer,
});
const cheat = trainerOf({
  command: ['/usr/bin/node', '/r/bin/run-ts.js', '/r/cheats/main.ts', 'heldout-train', '/x/leak.json'],
  readOnlyPaths: ['/x'],
});
const honestCheat = trainerOf({ command: ['/usr/bin/node', '/r/bin/run-ts.js', '/r/cheats/main.ts', 'honest', '/x/leak.json'] });
const charlmRecipe = { params: { lr: 0.02, hidden: 32, steps: 300 }, format: 'charlm-v1' };
const sources = (o: ReferenceInputs) => referenceTrainers(o).map((r) => r.source);

test("the built-in and the custom tasks name Flywheel's own trainer as their reference", () => {
  expect(taskForSpec({ kind: 'builtin-code' } as never).referenceTrainer).toBe('builtin');
  expect(taskForSpec({ kind: 'custom', dataset: 'd@1', suite: 's@1' } as never).referenceTrainer).toBe('builtin');
});

test("the task's reference trainer retrains a charlm recipe of the candidate's command, with none of its paths", () => {
  const [first] = referenceTrainers({ candidate: cheat, recipe: charlmRecipe, task: 'builtin' });
  expect(first.source).toBe('task');
  expect(first.independent).toBe(true);
  // Flywheel's command, the recipe's knobs; the paths the candidate's command was shown (its leak's folder) are not.
  expect(first.trainer).toMatchObject({ command: 'builtin', fixed: cheat.fixed, readOnlyPaths: [], env: {}, passEnv: [], network: false });
  expect(first.control).toBe(
    "independent: the reruns ran the task's reference trainer (builtin), Flywheel's own, which no candidate writes",
  );
});

test("the task's reference is passed over for a recipe it cannot retrain: another format, or a knob it does not have", () => {
  const incumbent = { versionId: 'ref@abc', trainer: honestCheat };
  expect(sources({ candidate: cheat, recipe: { ...charlmRecipe, format: 'fixture-v1' }, task: 'builtin', incumbent })).toEqual([
    'incumbent',
    'candidate',
  ]);
  expect(sources({ candidate: cheat, recipe: { ...charlmRecipe, params: { quality: 1 } }, task: 'builtin', incumbent })).toEqual([
    'incumbent',
    'candidate',
  ]);
  const withFixed = trainerOf({ command: cheat.command, fixed: { n_layer: 2 } });
  expect(sources({ candidate: withFixed, recipe: charlmRecipe, task: 'builtin' })).toEqual(['candidate']);
});

test("the incumbent's pinned trainer, when its command differs from the candidate's", () => {
  const incumbent = { versionId: 'ref@abc', trainer: honestCheat };
  const [first] = referenceTrainers({ candidate: cheat, recipe: charlmRecipe, incumbent });
  expect(first).toMatchObject({ source: 'incumbent', trainer: honestCheat, independent: true });
  expect(first.control).toMatch(
    /^independent: the reruns ran the incumbent's pinned trainer \(node run-ts\.js main\.ts honest leak\.json, campaign version ref@abc\)/,
  );
  // The same argv is the same code (a command's files are not pinned), whatever else of the block differs.
  const sameCommand = { versionId: 'ref@abc', trainer: { ...cheat, fixed: { steps: 10 } } };
  expect(sources({ candidate: cheat, recipe: charlmRecipe, incumbent: sameCommand })).toEqual(['candidate']);
});

test("with neither, the candidate's own trainer: blind, and saying why, unless it is Flywheel's own", () => {
  const [shared] = referenceTrainers({ candidate: cheat, recipe: { ...charlmRecipe, format: 'fixture-v1' }, task: 'builtin' });
  expect(shared).toMatchObject({ source: 'candidate', trainer: cheat, independent: false });
  expect(shared.control.startsWith(BLIND_REFERENCE)).toBe(true);
  expect(shared.control).toMatch(
    /the task's reference trainer \(builtin\) cannot, the incumbent's pinned trainer is unknown\), so a leak in trainer code is in the reference too and the leak check is weaker/,
  );
  const builtin = trainerOf({ command: 'builtin' });
  const [own] = referenceTrainers({ candidate: builtin, recipe: { ...charlmRecipe, format: 'hf-causal-lm-v1' } });
  expect(own).toMatchObject({ source: 'candidate', independent: true });
  expect(own.control).toBe("independent: the reruns ran Flywheel's own trainer (builtin), which no candidate writes");
});
