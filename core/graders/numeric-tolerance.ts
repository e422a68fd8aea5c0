// The numeric grader: the first number in the output is within an absolute or relative tolerance of the reference.
import { z } from 'zod';

export const numericToleranceConfigSchema = z.strictObject({
  kind: z.literal('numeric_tolerance'),
  /** Largest accepted |output - reference|. @default 1e-6 */
  absolute: z.number().min(0).default(1e-6),
  /** Largest accepted |output - reference| / |reference|; either bound suffices. @default 0 */
  relative: z.number().min(0).default(0),
});
export type NumericToleranceConfig = z.output<typeof numericToleranceConfigSchema>;

const NUMBER = /[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?/;

/** The first number written in a text, or undefined. */
export function firstNumber(s: string): number | undefined {
  const m = NUMBER.exec(s);
  return m ? Number(m[0]) : undefined;
}

/** 1 when the output's first number is within tolerance of the reference's, else 0 (no number is 0). */
export function gradeNumericTolerance(output: string, reference: string, config: NumericToleranceConfig): number {
  const got = firstNumber(output);
  const want = firstNumber(reference);
  if (got === undefined || want === undefined || !Number.isFinite(got)) return 0;
  const diff = Math.abs(got - want);
  return diff <= config.absolute || diff <= config.relative * Math.abs(want) ? 1 : 0;
}
