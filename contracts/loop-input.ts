// What a person may type as a loop's input in the Temporal UI or `temporal workflow start`, checked in the
// workflow's first step: a wrong input fails the workflow at once with one line that says what is wrong and what is
// expected, never a workflow task that crashes and retries forever. Deterministic and free of I/O (workflow code).

/** Which campaign version a loop runs, as typed: an id, a campaign (its newest version), or a spec to register. */
export interface CampaignRef {
  /** `NAME@HASH` (or a prefix of the hash) */
  campaignVersionId?: string;
  /** A registered campaign's name: its newest version. */
  campaignId?: string;
  /** A campaign spec (JSON), registered as a version by the loop's first activity. */
  spec?: unknown;
}

export const INNER_LOOP_EXAMPLE =
  '{"campaignId": "NAME"} (its newest version), {"campaignVersionId": "NAME@HASH"}, or {"spec": {"name": "NAME", …}}';
export const OUTER_LOOP_EXAMPLE = '{"campaignId": "NAME", "iterations": 1} (add "spec": {…} for a campaign not registered yet)';

const INNER_KEYS = [
  'campaignVersionId',
  'campaignId',
  'spec',
  'datasetVersionId',
  'baseCheckpointId',
  'budget',
  'iteration',
  'historyEventsLimit',
  'carry',
];
const OUTER_KEYS = ['campaignId', 'campaignVersionId', 'spec', 'iterations', 'trigger', 'innerBudget', 'carry'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isText = (v: unknown) => typeof v === 'string' && v.trim().length > 0;
const isCount = (v: unknown, min: number) => typeof v === 'number' && Number.isInteger(v) && v >= min;

/** Keys the input may not hold; "did you mean" for a near one. */
function unknownKeys(input: Record<string, unknown>, allowed: string[]): string[] {
  return Object.keys(input)
    .filter((k) => !allowed.includes(k))
    .map((k) => {
      const near = allowed.find((a) => a.toLowerCase() === k.toLowerCase() || a.toLowerCase().startsWith(k.toLowerCase()));
      return near ? `"${k}" (did you mean "${near}"?)` : `"${k}"`;
    });
}

function refProblems(input: Record<string, unknown>, needsOne: boolean): string[] {
  const problems: string[] = [];
  const { campaignVersionId, campaignId, spec } = input;
  if (campaignVersionId !== undefined && !(isText(campaignVersionId) && String(campaignVersionId).includes('@')))
    problems.push(`"campaignVersionId" must be "NAME@HASH", not ${JSON.stringify(campaignVersionId)}`);
  if (campaignId !== undefined && !isText(campaignId))
    problems.push(`"campaignId" must be a campaign's name, not ${JSON.stringify(campaignId)}`);
  if (spec !== undefined && !isObject(spec)) problems.push('"spec" must be a campaign spec object');
  if (spec !== undefined && campaignVersionId !== undefined) problems.push('give "spec" or "campaignVersionId", not both');
  if (isObject(spec) && isText(campaignId) && spec.name !== undefined && spec.name !== campaignId)
    problems.push(`"campaignId" "${String(campaignId)}" differs from the spec's name ${JSON.stringify(spec.name)}`);
  if (needsOne && campaignVersionId === undefined && campaignId === undefined && spec === undefined) problems.push('it names no campaign');
  return problems;
}

function budgetProblems(budget: unknown, field: string): string[] {
  if (budget === undefined) return [];
  if (!isObject(budget)) return [`"${field}" must be an object like {"experiments": 8, "parallelism": 2}`];
  const problems = unknownKeys(budget, ['experiments', 'parallelism']).map((k) => `"${field}" has an unknown field ${k}`);
  if (budget.experiments !== undefined && !isCount(budget.experiments, 0))
    problems.push(`"${field}.experiments" must be a whole number ≥ 0`);
  if (budget.parallelism !== undefined && !isCount(budget.parallelism, 1))
    problems.push(`"${field}.parallelism" must be a whole number ≥ 1`);
  return problems;
}

/**
 * The one line for `input`: not an object, or the shared checks (unknown keys, the campaign named, the budget) and the
 * loop's own (`more`), joined, with what is expected; undefined when nothing is wrong.
 */
function problemLine(
  loop: string,
  input: unknown,
  shape: { keys: string[]; needsRef: boolean; budget: string; example: string },
  more: (input: Record<string, unknown>) => string[],
): string | undefined {
  const problems = !isObject(input)
    ? [`not a JSON object (${JSON.stringify(input) ?? 'nothing'})`]
    : [
        ...unknownKeys(input, shape.keys).map((k) => `unknown field ${k}`),
        ...refProblems(input, shape.needsRef),
        ...budgetProblems(input[shape.budget], shape.budget),
        ...more(input),
      ];
  return problems.length === 0 ? undefined : `${loop} input: ${problems.join('; ')}; expected ${shape.example}`;
}

/** What is wrong with an `innerLoop` input, in one line; undefined when it is good. */
export function innerLoopInputProblem(input: unknown): string | undefined {
  return problemLine('innerLoop', input, { keys: INNER_KEYS, needsRef: true, budget: 'budget', example: INNER_LOOP_EXAMPLE }, (i) => [
    ...['datasetVersionId', 'baseCheckpointId']
      .filter((k) => i[k] !== undefined && !isText(i[k]))
      .map((k) => `"${k}" must be an id (text)`),
    ...(i.iteration !== undefined && !isCount(i.iteration, 0) ? ['"iteration" must be a whole number ≥ 0'] : []),
    ...(i.historyEventsLimit !== undefined && !isCount(i.historyEventsLimit, 1) ? ['"historyEventsLimit" must be a whole number ≥ 1'] : []),
  ]);
}

/** What is wrong with an `outerLoop` input, in one line; undefined when it is good. */
export function outerLoopInputProblem(input: unknown): string | undefined {
  return problemLine('outerLoop', input, { keys: OUTER_KEYS, needsRef: false, budget: 'innerBudget', example: OUTER_LOOP_EXAMPLE }, (i) => [
    ...(i.campaignId === undefined && !(isObject(i.spec) && isText(i.spec.name))
      ? ['it needs "campaignId" (or a "spec" with a "name")']
      : []),
    ...(i.iterations !== undefined && !isCount(i.iterations, 1) ? ['"iterations" must be a whole number ≥ 1'] : []),
    ...(i.trigger !== undefined && !isText(i.trigger) ? ['"trigger" must be text'] : []),
  ]);
}

/** The error type both loops fail with on a bad input (non-retryable). */
export const INVALID_LOOP_INPUT = 'InvalidLoopInput';
