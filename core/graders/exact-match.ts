// The exact-match grader: the whole output, trimmed, equals the reference (or one of its accepted forms).
import { z } from 'zod';

export const exactMatchConfigSchema = z.strictObject({
  kind: z.literal('exact_match'),
  /** Compare case-insensitively. @default false */
  ignoreCase: z.boolean().default(false),
  /** Other answers accepted besides the reference. @default [] */
  alternatives: z.array(z.string()).default([]),
});
export type ExactMatchConfig = z.output<typeof exactMatchConfigSchema>;

/** 1 when the trimmed output equals the trimmed reference or an alternative, else 0. */
export function gradeExactMatch(output: string, reference: string, config: ExactMatchConfig): number {
  const norm = (s: string) => (config.ignoreCase ? s.trim().toLowerCase() : s.trim());
  const got = norm(output);
  return [reference, ...config.alternatives].some((r) => norm(r) === got) ? 1 : 0;
}
