// The shape of the built-in task's eval suite, for naming its metrics before the suite is built (`flywheel validate`
// checks `selection.metric` without a database): public completion items graded on the next token, one category per
// token class, and loss chunks, one category per language. No text, no I/O.
import type { TokenClass } from '../../core/graders/code-tokens';
import type { MetricItem } from '../../core/eval-suite/suite-metrics';
import type { Language } from './eval-items';

const TOKEN_CLASSES: readonly TokenClass[] = ['identifier', 'keyword', 'number', 'operator', 'punct', 'other'];
const LANGUAGES: readonly Language[] = ['typescript', 'javascript', 'other'];

/** The suite id `validate` names for the built-in task (its real id carries its content hash). */
export const BUILTIN_SUITE_LABEL = 'builtin-code';

/** One public item per grader and category the built-in suite can hold. */
export function builtinSuiteShape(): (MetricItem & { split: string })[] {
  return [
    ...TOKEN_CLASSES.map((category) => ({ split: 'public', grader: 'exact_token', category })),
    ...LANGUAGES.map((category) => ({ split: 'public', grader: 'bits_per_byte', category })),
  ];
}
