// The test-program grader's pure half: its settings and the program it runs (the output, then the item's tests).
// The child process that runs it, with its time and memory limits, is activities/eval/graders/run-test-program.ts.
import { z } from 'zod';

export const testProgramConfigSchema = z.strictObject({
  kind: z.literal('test_program'),
  /** The item's tests: JavaScript run after the output; the item passes when the program exits 0. */
  tests: z.string().min(1),
  /** Wall-clock limit of one run, in milliseconds; past it the child is killed and the item is an error. @default 5000 */
  timeoutMs: z.number().int().min(10).max(600_000).default(5000),
  /** Old-space limit of the child's heap, in MiB; past it the child dies and the item is an error. @default 64 */
  memoryMb: z.number().int().min(8).max(16_384).default(64),
});
export type TestProgramConfig = z.output<typeof testProgramConfigSchema>;

/** The marker the tests print last; a program that exits 0 without it did not run the tests to their end. */
export const TESTS_PASSED_MARKER = '__flywheel_tests_passed__';

/**
 * The program: the output (the candidate's code), then the tests, then the marker. The output runs in the same
 * program as the tests on purpose: that is what "run the output against tests" means, and it is why a cheat-only
 * item (unsatisfiable tests) exists: only an output that tampers with the program (exits early, rewrites the
 * marker's printer) can pass it.
 */
export function testProgramSource(output: string, config: TestProgramConfig): string {
  return `${output}\n;\n${config.tests}\n;\nprocess.stdout.write(${JSON.stringify(`\n${TESTS_PASSED_MARKER}\n`)});\n`;
}
