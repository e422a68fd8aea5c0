// `flywheel validate` and `flywheel run` check the spec's knob names against the trainer's before anything starts:
// the built-in trainer's knobs are known (core/trainer-defaults.ts); any other trainer is asked through its
// `describe` entry point, sandboxed as its `train` is (backends/sandbox/describe-trainer.ts). A trainer that cannot
// say, or that runs in a cluster's container, is not checked: a note, never a problem. A recipe campaign's `{recipe}`
// is its folder as it is (registration pins the same files).
import path from 'node:path';
import { describeTrainer } from '../backends/sandbox/describe-trainer';
import { SANDBOXED_BACKENDS } from '../backends/sandbox/trainer-start';
import { spelledKnobs, undeclaredKnobProblems } from '../core/knob-check';
import { withRecipe } from '../core/recipe-placeholder';
import type { CampaignSpec } from '../core/spec';
import { CHARLM_DEFAULT_PARAMS } from '../core/trainer-defaults';
import { predictScratchRoot } from '../services/paths';

export interface KnobCheck {
  /** One line per knob the trainer does not have (`searchSpace.hiden: "hiden" is not a knob of …`). */
  problems: string[];
  /** Why the knobs were not checked, when they were not. */
  unchecked?: string;
}

export async function checkKnobs(spec: CampaignSpec, home: string): Promise<KnobCheck> {
  const spelled = spelledKnobs(spec);
  const { command } = spec.trainer;
  if (command === 'builtin')
    return { problems: undeclaredKnobProblems(spelled, Object.keys(CHARLM_DEFAULT_PARAMS), 'the built-in trainer') };
  if (!SANDBOXED_BACKENDS.has(spec.backend.kind))
    return { problems: [], unchecked: `backend.kind ${spec.backend.kind} runs the trainer in the cluster's container` };
  const described = await describeTrainer({ trainer: withRecipeFolder(spec.trainer), hide: [home, predictScratchRoot()], home });
  if ('unchecked' in described) return { problems: [], unchecked: described.unchecked };
  const name = command === 'hf' ? 'the hf trainer' : `the trainer (${command.map((a) => a.split('/').pop()).join(' ')})`;
  return { problems: undeclaredKnobProblems(spelled, described.knobs, name) };
}

/** A recipe campaign's trainer, before registration pins a commit: `{recipe}` is the folder as it is, read-only. */
function withRecipeFolder(trainer: CampaignSpec['trainer']): CampaignSpec['trainer'] {
  if (!trainer.recipe || !Array.isArray(trainer.command)) return trainer;
  const dir = path.resolve(trainer.recipe.path);
  return { ...trainer, command: withRecipe(trainer.command, dir), readOnlyPaths: [...trainer.readOnlyPaths, dir] };
}
