// Whether the seed reruns that serve as the held-out leak check's reference model (heldoutOutrunsPublic) could share a
// leak with the candidate. A leak can live in trainer code (the planted `heldout-train` cheat is part of the trainer
// command); reruns trained by the same command inherit it, and then the reference control cannot see it. Flywheel's
// own trainers (`builtin`, `hf`) are code no candidate writes; a command of the campaign's own is the candidate's code.
import type { TrainerCommandSpec } from '../trainer-program';

export const BLIND_REFERENCE = "blind: the reruns share the candidate's trainer";

/** What the decision records of its reference control, from the trainer command the reruns ran. */
export function referenceControlOf(command: TrainerCommandSpec): string {
  if (command === 'builtin' || command === 'hf')
    return `independent: the reruns ran Flywheel's own trainer (${command}), which no candidate writes`;
  return BLIND_REFERENCE;
}
