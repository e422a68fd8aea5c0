// The error a campaign spec (or a block of it) raises when it fails validation, and the `path: message` lines it
// carries: shared by the spec and the blocks it embeds, so neither imports the other.
import type { z } from 'zod';
import { UsageError } from './errors';

/** A spec that failed validation: one `path: message` line per problem. */
export class InvalidSpecError extends UsageError {
  constructor(
    readonly problems: string[],
    where = 'campaign spec',
  ) {
    super(`${where} is invalid:\n${problems.join('\n')}`);
  }
}

/** Turns zod issues into `a.b.c: message` lines, the format `flywheel validate` prints. */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`);
}

/** A spec too large to register: refused before anything is written or any workflow is started. */
export class SpecTooLargeError extends UsageError {}
