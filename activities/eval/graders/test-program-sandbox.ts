// The sandbox of each test-program process: the same kind as a trainer's `predict` (bubblewrap: no network, no
// FLYWHEEL_HOME, nothing of Flywheel's but the harness folder, an unprivileged uid of its own, kernel limits), with
// no file to read or write: the output and the tests reach their processes over the wire only.
import path from 'node:path';
import { PRLIMIT } from '../../../backends/sandbox/kernel-limits';
import { isolate } from '../../../backends/sandbox/sandbox';
import { TEST_PROGRAM_MAX_MESSAGE } from '../../../core/graders/test-program';
import { mib } from '../../../core/resource-limits';

/** The harness programs: plain CommonJS, so Node starts them without a compiler. */
export const HARNESS_DIR = path.join(__dirname, 'test-program');
const HARNESS_FILES = { output: 'output-host.js', tests: 'tests-host.js' } as const;
export type HarnessKind = keyof typeof HARNESS_FILES;

/**
 * Address space Node needs beyond its heap: V8's fixed reservations and the threads' stacks (a process with a 16 MiB
 * heap does not start under 704 MiB on Node 20). The sandbox's own address-space limit leaves room for WebAssembly's
 * guard regions, which a grader has no use for, and no process here has a watcher of its resident memory: each gets
 * a tighter one inside, the heap's plus this, so a Buffer or an array buffer cannot take the host's memory either.
 */
const NODE_ADDRESS_SPACE_MB = 1024;
/** Node runs about ten threads, and RLIMIT_NPROC counts threads: room for those, not for a fork bomb. */
const PROCESSES = 64;
const OPEN_FILES = 64;
/** Neither process has a reason to write a file: its /tmp is private, and this caps each file in it. */
const DISK_MB = 8;

export interface HarnessSandbox {
  /** The item's `memoryMb`: the process's heap. */
  memoryMb: number;
  /** FLYWHEEL_HOME, predict's scratch root, the task's eval sources: masked wherever a bound folder covers them. */
  hide: string[];
  /** The sandbox's own uid: one per output process, one per tests process. */
  uidKey: string;
}

/** The bubblewrap argv that starts a harness; throws where the host cannot make the sandbox (probe it first). */
export function harnessArgv(kind: HarnessKind, s: HarnessSandbox): string[] {
  return isolate({
    argv: [
      PRLIMIT,
      `--as=${mib(s.memoryMb + NODE_ADDRESS_SPACE_MB)}`,
      '--',
      process.execPath,
      `--max-old-space-size=${s.memoryMb}`,
      path.join(HARNESS_DIR, HARNESS_FILES[kind]),
      String(TEST_PROGRAM_MAX_MESSAGE),
    ],
    env: { PATH: '/usr/bin:/bin' },
    cwd: '/tmp',
    code: [HARNESS_DIR],
    data: [],
    readWrite: [],
    hide: s.hide,
    network: false,
    unsandboxed: false,
    trusted: false,
    limits: { memoryMb: s.memoryMb, processes: PROCESSES, openFiles: OPEN_FILES, diskMb: DISK_MB },
    uidKey: s.uidKey,
  }).argv;
}
