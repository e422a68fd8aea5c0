// Turns a trainer entry point (`train` or `predict`) into the argv that runs it isolated: inside bubblewrap where
// the host can make the sandbox, or, for a campaign that set `trainer.unsandboxed`, under `env -i` so that the
// environment allow-list holds even then. One place for both the training backends and the eval activity.
import { bubblewrapArgv, probeSandbox, type SandboxPolicy } from './bubblewrap';
import { probeEgress } from './egress-network';
import { limitedArgv } from './kernel-limits';
import { prepareMounts, sandboxIdentity } from './sandbox-identity';
import { programPaths } from './program-paths';
import { NonRetryableError } from '../../core/errors';
import type { ResourceLimits } from '../../core/resource-limits';

export interface IsolationRequest {
  argv: string[];
  /** The trainer's whole environment (core/trainer-environment.ts); PATH is extended with the interpreter's bin. */
  env: Record<string, string>;
  cwd: string;
  /** Read-only code beyond what the argv names: the built-in trainer's checkout, `trainer.readOnlyPaths`. */
  code: string[];
  /** Read-only data: the dataset version, the base checkpoint, predict's checkpoint and prompts. */
  data: string[];
  readWrite: string[];
  /** FLYWHEEL_HOME and the task's eval sources: masked wherever code would show them. */
  hide: string[];
  /**
   * Read-only code of Flywheel's own that lives under a hidden path (the hf-venv under FLYWHEEL_HOME): bound after the
   * masks, so it alone of the hidden path shows. @default []
   */
  unmasked?: string[];
  /** What to run when the program is missing (`run flywheel setup hf`): appended to the one-line problem. */
  programHint?: string;
  network: boolean;
  /** `trainer.unsandboxed`: run without the filesystem and network sandbox where none can be made. */
  unsandboxed: boolean;
  /** Flywheel's own code (the built-in trainer): may run without a sandbox on a host that cannot make one. */
  trusted?: boolean;
  /**
   * The kernel's share of the program's limits (core/resource-limits.ts): address space from `memoryMb`, processes,
   * open files, file size from `diskMb`. Unset fields are not limited. @default none
   */
  limits?: Partial<ResourceLimits>;
  /**
   * Picks the sandbox's own unprivileged uid when the worker runs as root (a run id, a predict's scratch folder): one
   * uid per key, so one run's processes count against its own process limit. @default the argv's program
   */
  uidKey?: string;
}

export interface IsolatedCommand {
  argv: string[];
  env: Record<string, string>;
  /** `bubblewrap`, or `none` with the reason (shown in reports beside the campaign). */
  sandbox: 'bubblewrap' | 'none';
  reason?: string;
  /** The host uid the program runs as, when the sandbox has one of its own (the worker is root). */
  uid?: number;
}

/** The host cannot make the sandbox and the campaign did not set `trainer.unsandboxed`: nothing is started. */
export class SandboxUnavailableError extends NonRetryableError {}

export function isolate(req: IsolationRequest): IsolatedCommand {
  const program = programPaths(req.argv, req.env.PATH ?? process.env.PATH);
  const env = { ...req.env, PATH: [...program.pathDirs, req.env.PATH ?? '/usr/local/bin:/usr/bin:/bin'].join(':') };
  const probe = probeSandbox();
  if (req.unsandboxed || !probe.ok) {
    if (!probe.ok && !req.unsandboxed && !req.trusted) {
      throw new SandboxUnavailableError(
        `no sandbox for the trainer on this host: ${probe.reason}; set trainer.unsandboxed: true to run it anyway`,
      );
    }
    const reason = req.unsandboxed
      ? 'trainer.unsandboxed is set'
      : `the built-in trainer runs without one: ${(probe as { reason: string }).reason}`;
    const assignments = Object.entries(env).map(([k, v]) => `${k}=${v}`);
    // No uid of its own without the sandbox: the kernel limits that do not count per uid still apply.
    const argv = limitedArgv(req.limits, { kind: 'userns' }, false, program.argv);
    return { argv: ['/usr/bin/env', '-i', ...assignments, ...argv], env, sandbox: 'none', reason };
  }
  if (req.network) {
    const egress = probeEgress();
    if (!egress.ok) throw new SandboxUnavailableError(egress.reason);
  }
  const identity = sandboxIdentity(req.uidKey ?? req.argv.join('\0'));
  prepareMounts(identity, req.readWrite, req.data);
  const policy: SandboxPolicy = {
    code: [...program.code, ...req.code],
    hide: req.hide,
    unmasked: req.unmasked ?? [],
    data: req.data,
    readWrite: req.readWrite,
    env,
    cwd: req.cwd,
    network: req.network,
    identity,
    limits: req.limits,
  };
  return {
    argv: bubblewrapArgv(probe.bwrap, policy, program.argv),
    env,
    sandbox: 'bubblewrap',
    ...(identity.kind === 'uid' ? { uid: identity.uid } : {}),
  };
}
