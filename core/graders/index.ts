// Flywheel's graders, one file per kind. Pure kinds score here; the test-program and LLM-judge kinds also need a
// child process or an HTTP call, made by activities/eval/graders/. They run in the eval activity, never in a trainer.
import { z } from 'zod';
import { exactMatchConfigSchema } from './exact-match';
import { llmJudgeConfigSchema } from './llm-judge';
import { numericToleranceConfigSchema } from './numeric-tolerance';
import { testProgramConfigSchema } from './test-program';

export { COMPLETION_BUDGET, gradeExactToken } from './exact-token';
export { gradeExactMatch, type ExactMatchConfig } from './exact-match';
export { gradeNumericTolerance, type NumericToleranceConfig } from './numeric-tolerance';
export type { TestProgramConfig } from './test-program';
export type { LlmJudgeConfig } from './llm-judge';

/** The built-in code task's graders, configured by nothing but their name. */
const builtinGraderSchema = z.strictObject({ kind: z.enum(['exact_token', 'bits_per_byte']) });

/** A grader and its settings, as stored with an eval item (`eval_items.grader_config`). */
export const graderConfigSchema = z.discriminatedUnion('kind', [
  builtinGraderSchema.extend({ kind: z.literal('exact_token') }),
  builtinGraderSchema.extend({ kind: z.literal('bits_per_byte') }),
  exactMatchConfigSchema,
  numericToleranceConfigSchema,
  testProgramConfigSchema,
  llmJudgeConfigSchema,
]);
export type GraderConfig = z.output<typeof graderConfigSchema>;
export type GraderKind = GraderConfig['kind'];

/** An item's score, or the error that kept it from being scored (an error is never a pass). */
export type GradeOutcome = { score: number; error?: undefined } | { score: 0; error: string };
