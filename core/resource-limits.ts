// What one sandboxed program may use: memory, processes, open files, disk, log bytes and wall time. A campaign's
// `trainer.limits` sets them for `train` and `predict`; Flywheel's own graders use fixed ones. Pure: the sandbox turns
// them into kernel limits (backends/sandbox), the local backend watches what only a watcher can see (a run's resident
// memory, its files on disk, its logs) and ends a run past one with the limit named as its reason.
import { z } from 'zod';

/**
 * The spec's `trainer.limits`. Every field is optional without a zod default, so campaign versions written before
 * limits existed keep their hashes; `resolveLimits` fills in the defaults where a limit is applied.
 */
export const resourceLimitsSchema = z.strictObject({
  /** Resident memory of all the program's processes together, in MiB. @default 8192 */
  memoryMb: z.number().int().min(64).max(4_194_304).optional(),
  /** Processes and threads the program may have at once (RLIMIT_NPROC counts threads). @default 512 */
  processes: z.number().int().min(8).max(1_000_000).optional(),
  /** Open files per process (RLIMIT_NOFILE). @default 4096 */
  openFiles: z.number().int().min(16).max(1_048_576).optional(),
  /** Bytes the program may leave in its run directory (checkpoints, metrics, anything), in MiB. @default 20480 */
  diskMb: z.number().int().min(1).max(1_073_741_824).optional(),
  /** Files and folders it may leave there. @default 100000 */
  files: z.number().int().min(16).max(100_000_000).optional(),
  /** Bytes of stdout, and of stderr, kept from it, in MiB; writing past them ends the run. @default 64 */
  logMb: z.number().int().min(1).max(1_048_576).optional(),
  /** Wall-clock limit of one `predict` process, in seconds (training has `innerLoop.trainingTimeoutSeconds`). @default 300 */
  predictSeconds: z.number().int().min(1).max(604_800).optional(),
});
export type ResourceLimitsInput = z.output<typeof resourceLimitsSchema>;
export type ResourceLimits = Required<ResourceLimitsInput>;

export const DEFAULT_LIMITS: ResourceLimits = {
  memoryMb: 8192,
  processes: 512,
  openFiles: 4096,
  diskMb: 20_480,
  files: 100_000,
  logMb: 64,
  predictSeconds: 300,
};

/** Every limit, the spec's value where it sets one. */
export function resolveLimits(given: ResourceLimitsInput | undefined): ResourceLimits {
  const out = { ...DEFAULT_LIMITS };
  for (const [k, v] of Object.entries(given ?? {})) if (v !== undefined) (out as Record<string, number>)[k] = v;
  return out;
}

/** The limits a run can exceed, as its reason names them. */
export type LimitName = 'memory' | 'processes' | 'open_files' | 'disk' | 'files' | 'log' | 'wall_time';

/** A run ended by a limit: which one, and what was seen (`3.1 GiB resident, limit 2 GiB`). */
export interface LimitBreach {
  limit: LimitName;
  detail: string;
}

/** The one line a run's error carries when a limit ended it. */
export function limitReason(b: LimitBreach): string {
  return `exceeded its ${b.limit.replace('_', ' ')} limit: ${b.detail}`;
}

const MIB = 1024 * 1024;

/** MiB as bytes. */
export const mib = (n: number): number => n * MIB;
