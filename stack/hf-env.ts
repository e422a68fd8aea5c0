// The Hugging Face trainer's Python environment: a venv of its own under FLYWHEEL_HOME (`hf-venv/`), with the pins
// of trainers/hf/requirements.txt, never the system Python. The trainer, Flywheel's HF scorer and the HF completion
// server all run its interpreter. A marker file holds the requirements' hash, so a changed pin reinstalls.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { HF_PYTHON_ENV, hfEnvDir } from '../core/trainer-program';

const REPO = path.join(__dirname, '..');
/** The pins, one file shared with .ci/install-hf.sh. */
export const HF_REQUIREMENTS = path.join(REPO, 'trainers', 'hf', 'requirements.txt');
const MARKER = 'flywheel-hf-requirements.sha256';

export { HF_PYTHON_ENV, hfEnvDir } from '../core/trainer-program';
export { hfPython } from '../backends/trainer-programs';

/** sha256 of the requirements file: what the marker must hold for the venv to count as installed. */
export function hfRequirementsHash(): string {
  return crypto.createHash('sha256').update(fs.readFileSync(HF_REQUIREMENTS)).digest('hex');
}

/** Whether the venv holds the current pins (or FLYWHEEL_HF_PYTHON names an interpreter that exists). */
export function hfEnvReady(home: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env[HF_PYTHON_ENV]) return fs.existsSync(env[HF_PYTHON_ENV]!);
  try {
    return fs.readFileSync(path.join(hfEnvDir(home), MARKER), 'utf8').trim() === hfRequirementsHash();
  } catch {
    return false;
  }
}

/**
 * Creates the venv and installs the pins, unless it already holds them. Returns the interpreter, or the problem in
 * one line. `python3` is the interpreter the venv is made from.
 */
export function installHfEnv(home: string, opts: { python3?: string } = {}): { python: string } | { problem: string } {
  const dir = hfEnvDir(home);
  const python = path.join(dir, 'bin', 'python3');
  if (hfEnvReady(home, {})) return { python };
  const steps: [string, string[]][] = [
    ...(fs.existsSync(python) ? [] : [[opts.python3 ?? 'python3', ['-m', 'venv', dir]] as [string, string[]]]),
    [python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', HF_REQUIREMENTS]],
  ];
  for (const [program, args] of steps) {
    const r = spawnSync(program, args, { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
    if (r.status !== 0) {
      const last = (r.stderr ?? '')
        .trim()
        .split('\n')
        .filter((l) => l && !/^\s*WARNING:/.test(l))
        .pop();
      return { problem: `${program} ${args.slice(0, 3).join(' ')}: ${last ?? r.error?.message ?? `exit ${r.status}`}` };
    }
  }
  fs.writeFileSync(path.join(dir, MARKER), hfRequirementsHash() + '\n');
  return { python };
}
