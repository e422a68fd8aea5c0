// Graders that score a prediction against a reference. Pure; they run in the eval activity, never in a trainer.
import { firstToken } from './code-tokens';

export type GraderKind = 'exact_token' | 'bits_per_byte';

/** 1 when the prediction's first code token is the reference token, else 0. */
export function gradeExactToken(prediction: string, reference: string): number {
  return firstToken(prediction) === reference ? 1 : 0;
}

/**
 * The longest completion asked of `predict` for an exact-token item. Constant, so the request does not reveal
 * the reference's length (a reference is one token; the suites Flywheel's tasks build keep it to 40 bytes).
 */
export const COMPLETION_BUDGET = 48;
