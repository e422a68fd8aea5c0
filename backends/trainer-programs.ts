// Where Flywheel's own trainers live on this host and what runs them: paths in this checkout (from this file's
// location) and the hf-venv's interpreter (FLYWHEEL_HF_PYTHON, else the venv under FLYWHEEL_HOME). The training and
// eval workers and `flywheel validate` resolve a spec's `trainer.command` here, on their own host; what is pure about
// it (the command's kinds, the venv's folder, which checkpoints Flywheel scores) is core/trainer-program.ts's.
import fs from 'node:fs';
import path from 'node:path';
import {
  BUILTIN_TRAINER_PATH,
  HF_PYTHON_ENV,
  HF_TRAINER_CODE_PATHS,
  HF_BASE_MODEL_ALIAS,
  HF_BASE_MODEL_ENV,
  HF_TRAINER_PATH,
  TORCH_TRAINER_PATH,
  hfEnvDir,
  hfModelsDir,
  type TrainerCommandSpec,
} from '../core/trainer-program';

/** The checkout Flywheel runs from. */
export const REPO = path.join(__dirname, '..');
export const BUILTIN_TRAINER = path.join(REPO, BUILTIN_TRAINER_PATH);
export const HF_TRAINER = path.join(REPO, HF_TRAINER_PATH);
export const HF_TRAINER_DIR = path.dirname(HF_TRAINER);
/**
 * The folders of the checkout the Hugging Face trainer imports (its own, the PyTorch trainer's shared run.json and
 * metrics modules, Flywheel's frozen-folder checks): bound read-only into its sandbox, and nothing else of the checkout.
 */
export const HF_TRAINER_CODE = HF_TRAINER_CODE_PATHS.map((p) => path.join(REPO, p));
/** The reference PyTorch trainer, whose torch-gpt-v1 checkpoints Flywheel does not read itself. */
export const TORCH_TRAINER = path.join(REPO, TORCH_TRAINER_PATH);

/** The interpreter to run HF code with: FLYWHEEL_HF_PYTHON, else the venv's python3 (which may not exist yet). */
export function hfPython(home: string, env: Record<string, string | undefined> = process.env): string {
  return env[HF_PYTHON_ENV] || path.join(hfEnvDir(home), 'bin', 'python3');
}

/**
 * The folder `model: flywheel-base` names on this host (the pointer `flywheel setup hf` writes under
 * FLYWHEEL_HOME/models), or undefined before it has been built.
 */
export function hfBaseModel(home: string): string | undefined {
  try {
    const folder = (
      JSON.parse(fs.readFileSync(path.join(hfModelsDir(home), `${HF_BASE_MODEL_ALIAS}.json`), 'utf8')) as { folder?: unknown }
    ).folder;
    return typeof folder === 'string' && fs.existsSync(path.join(folder, 'config.json')) ? folder : undefined;
  } catch {
    return undefined;
  }
}

/** What the hf trainer's sandbox gets for the base model: its folder, bound read-only, and named in its environment. */
export function hfBaseModelBinding(home: string): { unmasked: string[]; env: Record<string, string> } {
  const folder = hfBaseModel(home);
  return folder ? { unmasked: [folder], env: { [HF_BASE_MODEL_ENV]: folder } } : { unmasked: [], env: {} };
}

/** The trainer's program and script, before its entry point: `home` is FLYWHEEL_HOME, where the hf-venv lives. */
export function trainerBase(command: TrainerCommandSpec, home: string): string[] {
  if (command === 'builtin') return [process.execPath, path.join(REPO, 'bin', 'run-ts.js'), BUILTIN_TRAINER];
  if (command === 'hf') return [hfPython(home), HF_TRAINER];
  return command;
}

/** The training-job contract's entry points (core/job-contract.ts). */
export type TrainerEntry = 'train' | 'predict' | 'describe';

export function trainerArgv(command: TrainerCommandSpec, home: string, entry: TrainerEntry, args: string[]): string[] {
  return [...trainerBase(command, home), entry, ...args];
}
