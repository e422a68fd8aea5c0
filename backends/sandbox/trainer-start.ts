// Whether a trainer can start where it is run: its program resolves, the script an interpreter is told to run is
// there, and the host can make its sandbox (or the spec opted out). The training worker asks before an inner loop
// writes anything (the checkTrainer activity); `flywheel validate` asks the same of its own host.
import fs from 'node:fs';
import path from 'node:path';
import { TrainerProgramNotFoundError } from './program-paths';
import { isolate, SandboxUnavailableError, type IsolatedCommand, type IsolationRequest } from './sandbox';

/**
 * Backends whose trainer command is built, sandbox and all, on the training worker: local processes and Slurm jobs.
 * Ray and Kubernetes run the trainer in the cluster's own container, where neither the worker nor this host can look.
 */
export const SANDBOXED_BACKENDS: ReadonlySet<string> = new Set(['local', 'slurm']);

/** Interpreters whose first argument, unless it is an option, is the script they run. */
const INTERPRETER = /^(python[\d.]*|node|bash|sh)$/;

/** The trainer can start here, isolated so; or the one-line problem that stops it. */
export type TrainerStart = { ok: true; sandbox: IsolatedCommand['sandbox'] } | { ok: false; problem: string };

/**
 * Whether `req` can start on this host. It builds the isolated command a launch builds (so it fails where a launch
 * would) and runs nothing of the trainer's: only a Python interpreter is asked for its import path, as at launch.
 */
export function trainerStart(req: IsolationRequest): TrainerStart {
  let cmd: IsolatedCommand;
  try {
    cmd = isolate(req);
  } catch (e) {
    if (e instanceof TrainerProgramNotFoundError && req.programHint) return { ok: false, problem: `${e.message}: ${req.programHint}` };
    if (e instanceof TrainerProgramNotFoundError || e instanceof SandboxUnavailableError) return { ok: false, problem: e.message };
    throw e;
  }
  const problem = scriptProblem(req.argv);
  return problem ? { ok: false, problem } : { ok: true, sandbox: cmd.sandbox };
}

/** An interpreter's script that is not there: the trainer starts in its run directory, so a relative one never is. */
function scriptProblem([program, script]: string[]): string | undefined {
  if (script === undefined || script.startsWith('-') || !INTERPRETER.test(path.basename(program))) return undefined;
  if (!path.isAbsolute(script))
    return `trainer script "${script}" is a relative path, but the trainer starts in its run directory: give its absolute path`;
  if (!fs.existsSync(script)) return `trainer script "${script}" was not found`;
  return undefined;
}
