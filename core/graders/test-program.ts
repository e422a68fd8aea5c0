// The test-program grader's pure half: its settings and the rules of the wire between its two processes. The output
// runs in a process of its own and the item's tests in another (activities/eval/graders/test-program/); the eval
// activity relays their messages and holds each side to its turn (test-program-turns.ts).
import { z } from 'zod';

export const testProgramConfigSchema = z.strictObject({
  kind: z.literal('test_program'),
  /**
   * The item's tests: a JavaScript script run in a process that never holds the output. A name the tests use and
   * neither define nor find among JavaScript's globals (or `assert`, `require` of assert and util, `console`) is the
   * output's: its value is copied when JSON-like, else a handle to call, construct or read. The item passes when the
   * script runs to its end without throwing.
   */
  tests: z.string().min(1),
  /** Wall-clock limit of one item, both processes together, in milliseconds; past it both stop and the item is an error. @default 5000 */
  timeoutMs: z.number().int().min(10).max(600_000).default(5000),
  /** Heap limit of the output's process, and of the tests', in MiB; past it the process dies and the item is an error. @default 64 */
  memoryMb: z.number().int().min(8).max(16_384).default(64),
});
export type TestProgramConfig = z.output<typeof testProgramConfigSchema>;

/** The longest message either process may send, in bytes: a longer one is a protocol violation. */
export const TEST_PROGRAM_MAX_MESSAGE = 1 << 20;
/** The longest output run: the largest `maxBytes` an item may set (scoreCheckpoint cuts every output to its item's). */
export const TEST_PROGRAM_MAX_OUTPUT = 65_536;
