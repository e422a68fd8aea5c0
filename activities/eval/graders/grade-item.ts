// One place that turns an item's grader config and an output into a score, for every kind but the loss
// (`bits_per_byte` is computed from the checkpoint itself, see ../loss-scorers.ts).
import type OpenAI from 'openai';
import { gradeExactMatch, gradeExactToken, gradeNumericTolerance, type GradeOutcome, type GraderConfig } from '../../../core/graders';
import { callLlmJudge } from './llm-judge-call';
import type { TestProgramGrader } from './test-program-grader';

export interface GradeContext {
  /** The suite's rubrics, by name (`eval_suites.settings.rubrics`). */
  rubrics: Record<string, string>;
  /** The judge's client; an item graded by a judge without one is an error. */
  judge?: OpenAI;
  /** The batch's test-program grader (openTestProgramGrader); a test_program item without one is an error. */
  testProgram?: TestProgramGrader;
}

export async function gradeItem(
  config: GraderConfig,
  item: { prompt: string; reference: string },
  output: string,
  ctx: GradeContext,
): Promise<GradeOutcome> {
  switch (config.kind) {
    case 'exact_token':
      return { score: gradeExactToken(output, item.reference) };
    case 'exact_match':
      return { score: gradeExactMatch(output, item.reference, config) };
    case 'numeric_tolerance':
      return { score: gradeNumericTolerance(output, item.reference, config) };
    case 'test_program':
      if (!ctx.testProgram) return { score: 0, error: 'no test-program grader is open for this batch' };
      return ctx.testProgram.grade(output, config);
    case 'llm_judge': {
      const rubric = ctx.rubrics[config.rubric];
      if (rubric === undefined) return { score: 0, error: `rubric "${config.rubric}" is not in the suite` };
      if (!ctx.judge) return { score: 0, error: 'no judge endpoint: set OPENAI_BASE_URL or OPENAI_API_KEY on the eval worker' };
      return callLlmJudge(ctx.judge, config, rubric, item, output);
    }
    case 'bits_per_byte':
      return { score: 0, error: 'bits_per_byte is scored from the checkpoint, not from an output' };
  }
}
