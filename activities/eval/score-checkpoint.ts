// scoreCheckpoint: grades a frozen checkpoint on one split of an eval suite. The trainer's `predict` answers
// the prompts; Flywheel's graders score them and Flywheel computes the loss itself. Held-out and test items never
// leave this activity: the result carries ids and scores only, and every read of them is logged with its reader. The
// sealed test split is scored for reports only (purpose `report`); no decision reads its scores.
import { Context } from '@temporalio/activity';
import { NotFoundError, UsageError } from '../../core/errors';
import { computeMetrics, type ScoredItem } from '../../core/eval-suite/suite-metrics';
import { predictBudgetOf } from '../../core/eval-suite/predict-budget';
import { graderConfigSchema, type GradeOutcome } from '../../core/graders';
import { hasEndpoint, openAiClient } from '../../agents/openai-client';
import { campaignOfRow } from '../campaign-of';
import type { ActivityDeps } from '../deps';
import { checkpointRoot, verifyCheckpoint } from '../../services/checkpoint-manifest';
import type { Checkpoint } from '../../services/checkpoints';
import { evalResultIdOf, type EvalResult } from '../../services/eval-results';
import type { Experiment } from '../../services/experiments';
import { recordScore, scoringInputs, type ScoringInputs } from '../../services/scoring-records';
import { splitItems, type EvalItem } from '../../services/suites/suite-items';
import type { SuiteSettings } from '../../core/eval-suite/suite-schema';
import type { CampaignSpec } from '../../core/spec';
import { trainerSetupOf } from '../training/trainer-isolation';
import { gradeItem, type GradeContext } from './graders/grade-item';
import { openTestProgramGrader } from './graders/test-program-grader';
import { utf8Prefix } from '../../core/utf8-prefix';
import { readSealedItems } from './heldout-items';
import { lossScorerFor, staleLossDtype } from './loss-scorers';
import { mapLimit } from './map-limit';
import { answerPrompts } from './answer-prompts';
import type { ScoreCheckpointInput, ScoreResult } from '../../contracts/eval';

export { OUTPUT_BUDGET } from '../../core/eval-suite/predict-budget';
/**
 * Items graded at once. A test_program item costs a sandboxed output process of its own and runs its tests in one of
 * the batch's tests processes (as many as this): two keep both cores of a small machine busy.
 */
const GRADE_CONCURRENCY = 2;

/**
 * `endsExperiment` (runTraining, for a warm-trained experiment's public split): the experiment's success is recorded
 * with its score, in the same statement, and the result says so (`experimentEnded`); a result answered from one
 * recorded already says nothing of the kind, and its workflow records the end itself.
 */
export async function scoreCheckpoint(
  deps: ActivityDeps,
  input: ScoreCheckpointInput,
  endsExperiment = false,
): Promise<ScoreResult & { experimentEnded?: true }> {
  const { db } = deps;
  // Refused before the cache answers too: a test score asked for anything but a report would feed a decision.
  if (input.split === 'test' && input.purpose !== 'report')
    throw new UsageError(`the sealed test split is scored for reports only, not for "${input.purpose}"`);
  const id = evalResultIdOf(input.checkpointId, input.suiteId, input.split);
  // The result already recorded, the checkpoint, its experiment and the suite's settings: one statement.
  const read = await scoringInputs(db, { resultId: id, checkpointId: input.checkpointId, suiteId: input.suiteId });
  const { done, settings } = read;
  // A cached result is answered unless its loss was scored in another dtype than the scorer's now: compared with a
  // score taken now, it would mix two dtypes in one comparison, so it is scored again and replaced.
  if (done && !staleLoss(done, read.ckpt))
    return { checkpointId: input.checkpointId, split: input.split, itemCount: done.itemCount, metrics: done.metrics };

  const { ckpt, exp, spec } = await checkpointToScore(deps, input.checkpointId, read);
  const items = await itemsToScore(deps, input);
  // A suite without probes has nothing for the hacking guard to score, one without a test split nothing to report:
  // an empty result, not an error.
  if (items.length === 0 && (input.split === 'probe' || input.split === 'test'))
    return { checkpointId: input.checkpointId, split: input.split, itemCount: 0, metrics: {} };
  if (items.length === 0) throw new NotFoundError(`eval suite "${input.suiteId}" has no ${input.split} items`);

  const graded = items.filter((i) => i.grader !== 'bits_per_byte');
  const { perItem, scored, errors, canaryHits, heldoutCanaryHits, outputs } =
    graded.length > 0 ? await gradeItems(deps, input, { ckpt, exp, spec }, graded, settings) : noGrades();
  const loss = await scoreLoss(deps, ckpt, items, perItem);
  const bitsPerByte = loss?.bitsPerByte;
  // pass_rate, accuracy, exact_match, grader.<kind>, category.<name>, bits_per_byte and the counts beside them.
  const metrics = computeMetrics(scored, bitsPerByte);

  // The result and the experiment's rank score: one statement.
  const result = {
    id,
    checkpointId: input.checkpointId,
    experimentId: ckpt.experimentId,
    suiteId: input.suiteId,
    split: input.split,
    itemCount: items.length,
    metrics,
    perItem,
    // The outputs as graded, for the predictions view: on the public split only (a held-out, probe or test output
    // would show what those items ask).
    details: {
      errors,
      canaryHits,
      heldoutCanaryHits,
      ...(input.split === 'public' ? { outputs } : {}),
      ...(loss ? { lossDtype: loss.dtype } : {}),
    },
  };
  const succeeded = endsExperiment && input.split === 'public';
  await recordScore(db, result, { replace: done !== undefined, rank: rankOf(input, metrics[spec.selection.metric]), succeeded });
  return {
    checkpointId: input.checkpointId,
    split: input.split,
    itemCount: items.length,
    metrics,
    ...(succeeded ? { experimentEnded: true as const } : {}),
  };
}

interface Scored {
  ckpt: Checkpoint;
  exp: Experiment;
  spec: CampaignSpec;
}

/** The checkpoint (as read), verified against its manifest, with its experiment and the campaign version that experiment pins. */
async function checkpointToScore(deps: ActivityDeps, checkpointId: string, { ckpt, exp }: ScoringInputs): Promise<Scored> {
  if (!ckpt) throw new NotFoundError(`checkpoint "${checkpointId}" does not exist`);
  verifyCheckpoint(ckpt.path, ckpt.sha256, checkpointId, checkpointRoot(ckpt));
  if (!exp) throw new NotFoundError(`experiment "${ckpt.experimentId}" of checkpoint "${checkpointId}" does not exist`);
  const spec = await campaignOfRow(deps, exp);
  return { ckpt, exp, spec };
}

/** The split's items; a held-out or test read is logged with this activity's workflow as its reader. */
async function itemsToScore(deps: ActivityDeps, input: ScoreCheckpointInput): Promise<EvalItem[]> {
  const info = Context.current().info;
  return input.split === 'heldout' || input.split === 'test'
    ? await readSealedItems(
        deps.db,
        input.suiteId,
        input.split,
        `${info.workflowExecution?.workflowId ?? 'standalone'}:${info.activityType}`,
        input.purpose,
      )
    : await splitItems(deps.db, input.suiteId, input.split);
}

/** The graded items' scores, errors and canary hits, as recorded in the result's per-item scores and details. */
interface Grades {
  perItem: Record<string, number>;
  scored: ScoredItem[];
  errors: Record<string, string>;
  canaryHits: string[];
  heldoutCanaryHits: string[];
  /** Each graded item's output as graded (cut to its budget). */
  outputs: Record<string, string>;
}

const noGrades = (): Grades => ({ perItem: {}, scored: [], errors: {}, canaryHits: [], heldoutCanaryHits: [], outputs: {} });

/** The trainer's `predict` answers the items (each cut to its budget), and their graders score the answers. */
async function gradeItems(
  deps: ActivityDeps,
  input: ScoreCheckpointInput,
  { ckpt, exp, spec }: Scored,
  graded: EvalItem[],
  settings: SuiteSettings,
): Promise<Grades> {
  const trainer = trainerSetupOf(spec, deps.home, exp.recipeCommit);
  const answers = await answerPrompts(deps, {
    campaignId: exp.campaignId,
    split: input.split,
    trainer,
    checkpoint: ckpt.path,
    prompts: graded.map((i) => ({ id: i.id, prompt: i.prompt, maxBytes: predictBudgetOf(i) })),
    signal: Context.current().cancellationSignal,
  });
  // predict is asked for at most an item's budget, and may write more: what it wrote past the budget is never
  // graded, checked for canaries or kept (a test program would run it).
  const predictions = new Map(graded.map((i) => [i.id, utf8Prefix(answers.get(i.id)!, predictBudgetOf(i))]));
  const testProgram = graded.some((i) => i.grader === 'test_program')
    ? openTestProgramGrader({ hide: trainer.hide, concurrency: GRADE_CONCURRENCY })
    : undefined;
  const ctx: GradeContext = {
    rubrics: settings.rubrics ?? {},
    judge: hasEndpoint(process.env) ? openAiClient(process.env) : undefined,
    testProgram,
  };
  const outcomes = await mapLimit(graded, GRADE_CONCURRENCY, async (i): Promise<GradeOutcome> => {
    const config = graderConfigSchema.safeParse(i.graderConfig ?? { kind: i.grader });
    if (!config.success) return { score: 0, error: `unreadable grader config: ${config.error.issues[0]?.message}` };
    return gradeItem(config.data, i, predictions.get(i.id)!, ctx);
  }).finally(() => testProgram?.close());
  return gradesOf(graded, outcomes, predictions, settings);
}

/** Tallies the outcomes (in the items' order), with the canaries each prediction completes. */
function gradesOf(graded: EvalItem[], outcomes: GradeOutcome[], predictions: Map<string, string>, settings: SuiteSettings): Grades {
  const g = noGrades();
  graded.forEach((i, k) => {
    const o = outcomes[k];
    g.perItem[i.id] = o.score;
    if (o.error !== undefined) g.errors[i.id] = o.error;
    // A canary the output writes, or completes from a prompt that holds its beginning. Held-out canaries apart:
    // their text is only in held-out items, so completing one proves the model saw held-out text.
    const out = predictions.get(i.id)!;
    g.outputs[i.id] = out;
    const completes = (c: string) => (i.prompt + out).includes(c) && !i.prompt.includes(c);
    const canaryHit = (settings.canaries ?? []).some(completes);
    const heldoutCanaryHit = (settings.heldoutCanaries ?? []).some(completes);
    if (canaryHit) g.canaryHits.push(i.id);
    if (heldoutCanaryHit) g.heldoutCanaryHits.push(i.id);
    g.scored.push({ grader: i.grader, category: i.category, score: o.score, error: o.error !== undefined, canaryHit, heldoutCanaryHit });
  });
  return g;
}

/**
 * The loss items' bits per byte and the dtype they were computed in, by the checkpoint format's own scorer (none:
 * undefined); adds their per-item scores.
 */
async function scoreLoss(
  deps: ActivityDeps,
  ckpt: Checkpoint,
  items: EvalItem[],
  perItem: Record<string, number>,
): Promise<{ bitsPerByte: number; dtype: string } | undefined> {
  const loss = items.filter((i) => i.grader === 'bits_per_byte');
  const scorer = lossScorerFor(ckpt.format);
  if (!(loss.length > 0 && scorer)) return undefined;
  const scores = await scorer(ckpt.path, loss, { home: deps.home, signal: Context.current().cancellationSignal });
  Object.assign(perItem, scores.perItem);
  return { bitsPerByte: scores.bitsPerByte, dtype: scores.dtype };
}

/** Whether a cached result's loss scores were taken in another dtype than its checkpoint's format's scorer uses now. */
function staleLoss(done: EvalResult, ckpt: Checkpoint | undefined): boolean {
  if (done.metrics.bits_per_byte === undefined) return false;
  const why = ckpt && staleLossDtype(ckpt.format, done);
  if (why) Context.current().log.info(`scoring ${done.id} again: ${why}`);
  return Boolean(why);
}

/**
 * An experiment's public score is the one its search ranked it by (purpose "select"); a public score taken for the
 * gate or a critique is recorded in its result but leaves it alone (a seed rerun, scored on public as the gate's
 * reference model, stays without one: no search ever ranks it). Undefined: the experiment's scores stay as they are.
 */
function rankOf(input: ScoreCheckpointInput, score: number | undefined): { publicScore: number } | { heldoutScore: number } | undefined {
  const ranks = input.split === 'heldout' || (input.split === 'public' && input.purpose === 'select');
  if (score === undefined || !ranks) return undefined;
  return input.split === 'public' ? { publicScore: score } : { heldoutScore: score };
}
