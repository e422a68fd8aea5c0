// How long an output `predict` is asked for on an eval item: the item's own `maxBytes` when its suite sets one, else
// its grader's default (the next token for exact_token, OUTPUT_BUDGET for every other grader).
import { COMPLETION_BUDGET } from '../graders';

/** The longest output asked of `predict` for items graded by something other than the next token. */
export const OUTPUT_BUDGET = 2048;

export function predictBudgetOf(item: { grader: string; maxBytes?: number | null }): number {
  return item.maxBytes ?? (item.grader === 'exact_token' ? COMPLETION_BUDGET : OUTPUT_BUDGET);
}
