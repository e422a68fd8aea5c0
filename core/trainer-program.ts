// Which program a spec's `trainer.command` runs, before its entry point: `builtin` is the TypeScript char-level
// model, `hf` the Hugging Face trainer run with the hf-venv's interpreter (under FLYWHEEL_HOME, or
// FLYWHEEL_HF_PYTHON), anything else the argv as written. Pure: the training and eval workers and `flywheel
// validate` resolve it here, on their own host.
import path from 'node:path';

export const REPO = path.join(__dirname, '..');
/** Flywheel's own trainers, relative to the checkout. */
export const BUILTIN_TRAINER_PATH = 'trainers/charlm/main.ts';
export const HF_TRAINER_PATH = 'trainers/hf/main.py';
export const TORCH_TRAINER_PATH = 'trainers/torch/main.py';
/** The checkout's folders the Hugging Face trainer imports: its own, the PyTorch trainer's shared modules, formats/hf. */
export const HF_TRAINER_CODE_PATHS = ['trainers/hf', 'trainers/torch', 'formats/hf'];
export const BUILTIN_TRAINER = path.join(REPO, 'trainers', 'charlm', 'main.ts');
export const HF_TRAINER_DIR = path.join(REPO, 'trainers', 'hf');
export const HF_TRAINER = path.join(HF_TRAINER_DIR, 'main.py');
/**
 * The folders of the checkout the Hugging Face trainer imports (its own, the PyTorch trainer's shared run.json and
 * metrics modules, Flywheel's frozen-folder checks): bound read-only into its sandbox, and nothing else of the checkout.
 */
export const HF_TRAINER_CODE = [HF_TRAINER_DIR, path.join(REPO, 'trainers', 'torch'), path.join(REPO, 'formats', 'hf')];
/** Overrides the hf-venv's interpreter (a GPU host's own environment with vLLM, say). */
export const HF_PYTHON_ENV = 'FLYWHEEL_HF_PYTHON';
/** What makes the hf-venv's interpreter exist, said wherever its absence stops a trainer. */
export const HF_SETUP_HINT = `run flywheel setup hf (or set ${HF_PYTHON_ENV})`;

export type TrainerCommandSpec = 'builtin' | 'hf' | string[];

export function hfEnvDir(home: string): string {
  return path.join(home, 'hf-venv');
}

/** The interpreter to run HF code with: FLYWHEEL_HF_PYTHON, else the venv's python3 (which may not exist yet). */
export function hfPython(home: string, env: Record<string, string | undefined> = process.env): string {
  return env[HF_PYTHON_ENV] || path.join(hfEnvDir(home), 'bin', 'python3');
}

/** The trainer's program and script, before its entry point: `home` is FLYWHEEL_HOME, where the hf-venv lives. */
export function trainerBase(command: TrainerCommandSpec, home: string): string[] {
  if (command === 'builtin') return [process.execPath, path.join(REPO, 'bin', 'run-ts.js'), BUILTIN_TRAINER];
  if (command === 'hf') return [hfPython(home), HF_TRAINER];
  return command;
}

export function trainerArgv(command: TrainerCommandSpec, home: string, entry: 'train' | 'predict', args: string[]): string[] {
  return [...trainerBase(command, home), entry, ...args];
}

/** The folder an interpreter belongs to (`<venv>/bin/python3` → `<venv>`): bound back into a sandbox that masks it. */
export function interpreterHome(python: string): string {
  return path.dirname(path.dirname(python));
}

/** The reference PyTorch trainer, whose torch-gpt-v1 checkpoints Flywheel does not read itself. */
export const TORCH_TRAINER = path.join(REPO, 'trainers', 'torch', 'main.py');

/**
 * Whether Flywheel scores the loss (bits_per_byte) of the checkpoints this trainer writes: `builtin` (charlm-v1) and
 * `hf` (hf-causal-lm-v1) yes, the reference PyTorch trainer no; a trainer of one's own is `unknown` until its manifest
 * names a format (it may write charlm-v1).
 */
export function lossScoredFor(command: TrainerCommandSpec): 'yes' | 'no' | 'unknown' {
  if (command === 'builtin' || command === 'hf') return 'yes';
  return command.some((a) => path.resolve(a) === TORCH_TRAINER) ? 'no' : 'unknown';
}

/**
 * Whether the trainer's `predict` speaks `predict --serve` (core/job-contract.ts PredictRequest): `trainer.warmPredict`
 * as the spec says, else yes for Flywheel's own trainers (`builtin`, `hf`) and no for a command of one's own.
 */
export function warmPredictOf(trainer: { command: TrainerCommandSpec; warmPredict?: boolean }): boolean {
  return trainer.warmPredict ?? (trainer.command === 'builtin' || trainer.command === 'hf');
}
