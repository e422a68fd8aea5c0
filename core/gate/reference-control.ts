// Who trains the seed reruns that serve as the held-out leak check's reference model (heldoutOutrunsPublic), and
// whether that trainer could share a leak with the candidate. A leak can live in trainer code (the planted
// `heldout-train` cheat is part of the trainer command): reruns trained by the candidate's own command inherit it, and
// then the reference control cannot see it. So the reruns run, in order of preference:
//   1. the task's reference trainer (core/task.ts `referenceTrainer`: Flywheel's own, which no candidate writes), when
//      it can retrain the recipe: the candidate's checkpoints are of the format it writes and every knob of the recipe
//      (the spec's `trainer.fixed` and the experiment's params) is one of its knobs;
//   2. else the incumbent's pinned trainer (the trainer block of the campaign version whose experiment produced the
//      incumbent checkpoint: the previous promoted recipe's), when its command differs from the candidate's;
//   3. else the candidate's own trainer: independent still when that is Flywheel's own (`builtin`, `hf`), else blind,
//      and the decision and its reason say so.
// Pure: activities/outer/plan-seed-reruns.ts gathers the inputs and registers the reruns' campaign version.
import path from 'node:path';
import type { CampaignSpec, Params } from '../spec';
import { CHARLM_DEFAULT_PARAMS } from '../trainer-defaults';
import type { TrainerCommandSpec } from '../trainer-program';

export const BLIND_REFERENCE = "blind: the reruns share the candidate's trainer";

/** A trainer block of a spec (`trainer`). */
export type TrainerBlock = CampaignSpec['trainer'];

/**
 * A task's reference trainer: Flywheel's own trainer that can retrain its recipes. Only the built-in trainer so far:
 * it reads nothing but its run directory and dataset, so the reruns' block needs no path of the campaign's.
 */
export type TaskReferenceTrainer = 'builtin';

/** What a reference trainer can retrain: recipes whose checkpoints are of `format` and whose knobs are all `knobs`. */
const RETRAINS: Record<TaskReferenceTrainer, { format: string; knobs: readonly string[] }> = {
  // formats/charlm/checkpoint.ts CHARLM_FORMAT; trainers/charlm/train-params.ts refuses any other knob.
  builtin: { format: 'charlm-v1', knobs: Object.keys(CHARLM_DEFAULT_PARAMS) },
};

/** Which of the three the reruns ran. */
export type ReferenceSource = 'task' | 'incumbent' | 'candidate';

export interface ReferenceTrainer {
  source: ReferenceSource;
  /** The trainer block the reruns run (the reruns' campaign version is the candidate's with this trainer). */
  trainer: TrainerBlock;
  /** False only when the reruns run a command of the candidate's campaign: a leak in that code is in the reference too. */
  independent: boolean;
  /** One line for the decision's `referenceControl` and the leak check's reason: `independent: …` or `blind: …`. */
  control: string;
}

export interface ReferenceInputs {
  /** The candidate's campaign version's trainer block. */
  candidate: TrainerBlock;
  /** The recipe the reruns retrain (its experiment params) and the candidate checkpoint's format. */
  recipe: { params: Params; format?: string };
  /** The task's reference trainer, when it declares one. */
  task?: TaskReferenceTrainer;
  /** The incumbent's pinned trainer: the campaign version its checkpoint's experiment ran. */
  incumbent?: { versionId: string; trainer: TrainerBlock };
}

/** The reruns' trainers in order of preference (see the top of the file); the last is always the candidate's own. */
export function referenceTrainers(o: ReferenceInputs): ReferenceTrainer[] {
  const out: ReferenceTrainer[] = [];
  const { candidate } = o;
  if (o.task && canRetrain(o.task, o.recipe, candidate.fixed))
    out.push({
      source: 'task',
      // Only what is no code of the campaign's: its command is Flywheel's, its knobs the recipe's; `unsandboxed` and
      // `limits` say what the host can make and allows. Paths, environment and network are left out.
      trainer: {
        command: o.task,
        fixed: candidate.fixed,
        env: {},
        passEnv: [],
        readOnlyPaths: [],
        network: false,
        unsandboxed: candidate.unsandboxed,
        ...(candidate.limits ? { limits: candidate.limits } : {}),
      },
      independent: true,
      control: `independent: the reruns ran the task's reference trainer (${o.task}), Flywheel's own, which no candidate writes`,
    });
  if (o.incumbent && !sameCommand(o.incumbent.trainer.command, candidate.command))
    out.push({
      source: 'incumbent',
      trainer: o.incumbent.trainer,
      independent: true,
      control: `independent: the reruns ran the incumbent's pinned trainer (${commandText(o.incumbent.trainer.command)}, campaign version ${o.incumbent.versionId}), in place of the candidate's (${commandText(candidate.command)})`,
    });
  out.push({
    source: 'candidate',
    trainer: candidate,
    independent: ownTrainer(candidate.command),
    control: ownTrainer(candidate.command)
      ? referenceControlOf(candidate.command)
      : `${BLIND_REFERENCE} (${commandText(candidate.command)}): no trainer the candidate's code did not write could retrain this recipe (${
          o.task ? `the task's reference trainer (${o.task}) cannot` : 'the task names no reference trainer'
        }, the incumbent's pinned trainer ${o.incumbent ? 'is the same command' : 'is unknown'}), so a leak in trainer code is in the reference too and the leak check is weaker: only the incumbent control can see it`,
  });
  return out;
}

/** What the decision records of its reference control, from the trainer command the reruns ran (and the candidate did). */
export function referenceControlOf(command: TrainerCommandSpec): string {
  if (ownTrainer(command)) return `independent: the reruns ran Flywheel's own trainer (${command}), which no candidate writes`;
  return BLIND_REFERENCE;
}

/** Whether the reference trainer can retrain the recipe: the same checkpoint format, and every knob one of its own. */
export function canRetrain(task: TaskReferenceTrainer, recipe: ReferenceInputs['recipe'], fixed: Record<string, unknown>): boolean {
  const { format, knobs } = RETRAINS[task];
  if (recipe.format !== format) return false;
  return [...Object.keys(fixed), ...Object.keys(recipe.params)].every((k) => knobs.includes(k));
}

const ownTrainer = (command: TrainerCommandSpec): command is 'builtin' | 'hf' => command === 'builtin' || command === 'hf';

/** A command's argv is pinned, its files are not: the same argv is taken for the same code. */
const sameCommand = (a: TrainerCommandSpec, b: TrainerCommandSpec) => JSON.stringify(a) === JSON.stringify(b);

/** `builtin`, or an argv by its arguments' base names (`node run-ts.js main.ts heldout-train leak.json`). */
function commandText(command: TrainerCommandSpec): string {
  return typeof command === 'string' ? command : command.map((a) => path.basename(a)).join(' ');
}
