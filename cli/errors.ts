// How the `flywheel` command fails: exit codes that mean something, and one clear line instead of a stack
// trace (the full stack only with FLYWHEEL_DEBUG=1).
import { CommanderError } from 'commander';
import { LoopFailedError, UsageError } from '../core/errors';

export { LoopFailedError, UsageError };

export const EXIT_OK = 0;
/** Something went wrong at run time: a server did not start, a connection failed. */
export const EXIT_FAILURE = 1;
/** The input was wrong: unknown option, bad spec, unreadable spec file. */
export const EXIT_USAGE = 2;

export function exitCodeFor(err: unknown): number {
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
  // Bad input or settings: every class that extends UsageError (InvalidSpecError, SpecFileError, PayloadKeyError, …).
  if (err instanceof UsageError) return EXIT_USAGE;
  return EXIT_FAILURE;
}

/** Prints the error for a person: its message (multi-line messages keep their lines), or the stack when debugging. */
export function reportError(err: unknown): void {
  // Commander has already printed its own message.
  if (err instanceof CommanderError) return;
  if (process.env.FLYWHEEL_DEBUG === '1') {
    console.error(err);
    return;
  }
  let message = err instanceof Error ? err.message : String(err);
  // Temporal wraps the reason (a refused update, a failed workflow) in `cause`: that is the line people need.
  const cause = err instanceof Error ? (err.cause as Error | undefined) : undefined;
  if (cause?.message && cause.message !== message) message = `${message}: ${cause.message}`;
  console.error(`flywheel: ${message}`);
}
