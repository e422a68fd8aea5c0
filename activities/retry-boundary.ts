// Where an activity's error meets Temporal's retry rules. An error class says whether retrying can help
// (core/errors.ts); here a non-retryable one becomes a non-retryable ApplicationFailure of the same type, message,
// stack and cause, so Temporal fails the activity at once. The workflows need no list of error names.
import { ApplicationFailure } from '@temporalio/common';
import { FlywheelError } from '../core/errors';

/** `err` as Temporal should see it: marked non-retryable when its class says retrying cannot help, else as it is. */
function asActivityFailure(err: unknown): unknown {
  if (err instanceof FlywheelError && !err.retryable) return ApplicationFailure.fromError(err, { nonRetryable: true });
  return err;
}

/** `fn`, whose non-retryable Flywheel errors fail its activity without a retry. */
export function withRetryBoundary<I, O>(fn: (input: I) => Promise<O>): (input: I) => Promise<O> {
  return async (input) => {
    try {
      return await fn(input);
    } catch (e) {
      throw asActivityFailure(e);
    }
  };
}

/** Every function of `activities` wrapped by withRetryBoundary. */
export function retryBoundaryAll<T extends object>(activities: T): T {
  return Object.fromEntries(
    Object.entries(activities).map(([name, fn]) => [name, withRetryBoundary(fn as (i: unknown) => Promise<unknown>)]),
  ) as T;
}
