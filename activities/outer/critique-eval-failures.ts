// critiqueEvalFailures: the teacher's view of the production model's mistakes on the PUBLIC split (items agents and
// researchers may see). Each sampled failed item gets the campaign teacher's plain-English critique of
// the model's actual output against the reference (every graded item, whatever its grader; loss items have no output); held-out items are never read here, so no teacher sees one.
// Its signal is never a training example: eval items stay out of every dataset (the contamination check would
// remove them anyway); the per-category failure rates shape the next loss weights instead.
import { predictBudgetOf } from '../../core/eval-suite/predict-budget';
import type { TrainingSignal } from '../../core/teacher/builtin-teacher';
import { recordCritiques, recordedCritiqueIds } from '../../services/critiques';
import { publicItemsToCritique } from '../../services/suites/suite-items';
import { splitScores } from '../../services/eval-results';
import { experimentRef } from '../../services/experiments';
import { checkpointById } from '../../services/checkpoints';
import { campaignOfRow } from '../campaign-of';
import { campaignsOf, type ActivityDeps } from '../deps';
import { runPredict, type PredictOptions } from '../eval/run-predict';
import type { CampaignSpec } from '../../core/spec';
import { reviseFeedback } from './revise-feedback';
import { trainerSetupOf } from '../training/trainer-isolation';
import { checkpointRoot, verifyCheckpoint } from '../../services/checkpoint-manifest';
import { teachFailures, teacherChoiceOf } from './teach-failures';
import { programTeacherOf } from './program-teacher';
import type { CritiqueEvalFailuresInput, CritiqueEvalFailuresResult } from '../../contracts/eval';

export const evalCritiqueIdOf = (outerIterationId: string, itemId: string): string => `${outerIterationId}/critique/${itemId}`;

const WHY = 'a public eval item: it informs the per-category loss weights and never enters a training set';

export async function critiqueEvalFailures(deps: ActivityDeps, input: CritiqueEvalFailuresInput): Promise<CritiqueEvalFailuresResult> {
  const spec = await campaignsOf(deps).resolve(input.campaignVersionId);
  // The `revision` signal: the production model revises this iteration's critiqued feedback (never an eval item).
  const revised = spec.outerLoop.signals.includes('revision') ? await reviseWithTaskCheck(deps, input, spec) : undefined;
  return { ...(await critiqueFailedItems(deps, input, spec)), ...(revised ? { revisions: revised } : {}) };
}

/** reviseFeedback with the task's checks: its teacher program (started only if asked, ended after) and its verifier. */
async function reviseWithTaskCheck(deps: ActivityDeps, input: CritiqueEvalFailuresInput, spec: CampaignSpec) {
  const program = programTeacherOf(spec, deps.home);
  try {
    return await reviseFeedback(deps, {
      campaignId: input.campaignId,
      outerIterationId: input.outerIterationId,
      checkpointId: input.checkpointId,
      predictor: await predictorOf(deps, input.checkpointId),
      task: teacherChoiceOf(deps, spec).task,
      ...(program ? { program: { name: program.teacher.name, verify: program.verify } } : {}),
    });
  } finally {
    program?.close();
  }
}

async function critiqueFailedItems(
  deps: ActivityDeps,
  input: CritiqueEvalFailuresInput,
  spec: CampaignSpec,
): Promise<CritiqueEvalFailuresResult> {
  const { db } = deps;
  const result = await splitScores(db, input.checkpointId, input.suiteId, 'public');
  if (!result) return { failed: 0, critiqued: 0, created: 0, byCategory: {} };
  // Only the public split is read here: held-out items never reach a teacher.
  const items = await publicItemsToCritique(db, input.suiteId, Object.keys(result.perItem));
  const failed = items.filter((i) => result.perItem[i.id] === 0);
  const sample = failed.sort((a, b) => order(a.id, input.seed) - order(b.id, input.seed) || (a.id < b.id ? -1 : 1)).slice(0, input.sample);
  if (sample.length === 0) return { failed: failed.length, critiqued: 0, created: 0, byCategory: {} };

  const outputs = await runPredict({
    ...(await predictorOf(deps, input.checkpointId)),
    prompts: sample.map((i) => ({ id: i.id, prompt: i.prompt, maxBytes: predictBudgetOf(i) })),
  });

  const byCategory: Record<string, number> = {};
  for (const i of sample) byCategory[i.category] = (byCategory[i.category] ?? 0) + 1;
  // Items an earlier attempt already critiqued are not sent to the teacher again.
  const done = await recordedCritiqueIds(
    db,
    sample.map((i) => evalCritiqueIdOf(input.outerIterationId, i.id)),
  );
  let created = 0;
  await teachFailures(
    teacherChoiceOf(deps, spec),
    sample.filter((i) => !done.has(evalCritiqueIdOf(input.outerIterationId, i.id))),
    (i) => ({ prompt: i.prompt, output: outputs.get(i.id)!, reference: i.reference, category: i.category }),
    async (made) => {
      const rows = made.map(({ item: i, taught }) => ({
        id: evalCritiqueIdOf(input.outerIterationId, i.id),
        campaignId: input.campaignId,
        outerIterationId: input.outerIterationId,
        sourceKind: 'eval',
        sourceId: i.id,
        teacher: taught.teacher,
        promptVersion: taught.promptVersion,
        text: `${taught.text} (Public eval item, category "${i.category}".)`,
        // Whatever the teacher proposed, an eval item is never an example.
        signal: [{ kind: 'none', why: WHY }] satisfies TrainingSignal[],
      }));
      created += await recordCritiques(db, rows);
    },
  );
  return { failed: failed.length, critiqued: sample.length, created, byCategory };
}

/** A seeded pseudo-random rank of an id (FNV-1a), so the sample is the same on every retry. */
function order(id: string, seed: number): number {
  let h = 0x811c9dc5 ^ seed;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * The checkpoint's file (checked against its sha256) and its own trainer (the version that trained it), for its
 * `predict`; the iteration's version names the teacher.
 */
async function predictorOf(deps: ActivityDeps, checkpointId: string): Promise<Pick<PredictOptions, 'trainer' | 'checkpointFile'>> {
  const ckpt = (await checkpointById(deps.db, checkpointId))!;
  verifyCheckpoint(ckpt.path, ckpt.sha256, checkpointId, checkpointRoot(ckpt));
  const exp = (await experimentRef(deps.db, ckpt.experimentId))!;
  return { trainer: trainerSetupOf(await campaignOfRow(deps, exp), deps.home), checkpointFile: ckpt.path };
}
