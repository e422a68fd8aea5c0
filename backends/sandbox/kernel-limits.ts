// The kernel's share of a sandboxed program's limits (core/resource-limits.ts), set by util-linux's `prlimit` just
// before the program starts: they bind whatever the program does, with or without a worker watching.
// - address space (RLIMIT_AS) from memoryMb, plus room for virtual reservations that are not memory in use (V8
//   reserves 10 GiB per WebAssembly memory, which tsx's esbuild loads): a backstop against a runaway allocation when no
//   worker watches; the local backend watches resident memory itself and ends a run past memoryMb. None on a host
//   with GPUs, whose drivers reserve terabytes of address space;
// - processes and threads (RLIMIT_NPROC, counted per host uid: only when the sandbox has a uid of its own);
// - open files (RLIMIT_NOFILE);
// - the size of any one file it writes (RLIMIT_FSIZE) from diskMb: past it the write fails with SIGXFSZ.
import fs from 'node:fs';
import { mib, type ResourceLimits } from '../../core/resource-limits';
import type { SandboxIdentity } from './sandbox-identity';

/** Address space beyond memoryMb that interpreters reserve without using (V8's WebAssembly guard regions, 10 GiB each). */
export const ADDRESS_SPACE_HEADROOM_MB = 16_384;

export const PRLIMIT = fs.existsSync('/usr/bin/prlimit') ? '/usr/bin/prlimit' : '/bin/prlimit';

/** The prlimit options for `limits`; empty when nothing is limited. */
export function prlimitOptions(limits: Partial<ResourceLimits>, identity: SandboxIdentity, gpus: boolean): string[] {
  const opts: string[] = [];
  if (limits.memoryMb !== undefined && !gpus) opts.push(`--as=${mib(limits.memoryMb + ADDRESS_SPACE_HEADROOM_MB)}`);
  if (limits.processes !== undefined && identity.kind === 'uid') opts.push(`--nproc=${limits.processes}`);
  if (limits.openFiles !== undefined) opts.push(`--nofile=${limits.openFiles}`);
  if (limits.diskMb !== undefined) opts.push(`--fsize=${mib(limits.diskMb)}`);
  return opts;
}

/** `argv` under those limits. */
export function limitedArgv(
  limits: Partial<ResourceLimits> | undefined,
  identity: SandboxIdentity,
  gpus: boolean,
  argv: string[],
): string[] {
  const opts = prlimitOptions(limits ?? {}, identity, gpus);
  return opts.length === 0 ? argv : [PRLIMIT, ...opts, '--', ...argv];
}

/** Which limits the kernel does not enforce for this sandbox, and why (recorded with the run's isolation). */
export function unenforcedLimits(limits: Partial<ResourceLimits> | undefined, identity: SandboxIdentity, gpus: boolean): string[] {
  const out: string[] = [];
  if (limits?.processes !== undefined && identity.kind !== 'uid')
    out.push('processes: the worker is not root, so the sandbox shares its uid (the local backend still counts them)');
  if (limits?.memoryMb !== undefined && gpus)
    out.push('address space: GPU drivers reserve more (the local backend watches resident memory)');
  return out;
}
