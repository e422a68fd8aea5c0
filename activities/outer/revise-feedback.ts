// The `revision` signal's first half: the production model answers each of the iteration's critiqued feedback
// failures again, with the critique in its prompt (core/teacher/signal-prompts.ts), through the trainer's own
// `predict`, sandboxed, in the eval activity (activities/eval/run-predict.ts, as scoring runs it). Each revision is
// stored with its verdict (core/teacher/verify-revision.ts: the task's teacher program's `verify`, else the task
// teacher's verifier, else the verified reference, else unverified); the dataset builder makes examples and pairs of verified ones only. Runs inside critiqueEvalFailures,
// the iteration's eval-queue step with the production checkpoint, so the outer loop's workflow is unchanged.
import { revisionPromptOf } from '../../core/teacher/signal-prompts';
import { verifyRevision, type TaskVerdict } from '../../core/teacher/verify-revision';
import type { TaskTeacher } from '../../core/teacher/task-teacher';
import { critiquedFeedback, recordRevisions, revisedCritiqueIds } from '../../services/critiques';
import type { ActivityDeps } from '../deps';
import { runPredict, type PredictOptions } from '../eval/run-predict';

export const revisionIdOf = (critiqueId: string): string => `${critiqueId}/revision`;

/** The most bytes a revision may be: a revision answers at the length of the original answer or the reference. */
export const MAX_REVISION_BYTES = 4096;

export interface ReviseFeedbackInput {
  campaignId: string;
  outerIterationId: string;
  /** The production checkpoint that answers. */
  checkpointId: string;
  /** Its trainer and file, as scoring runs predict. */
  predictor: Pick<PredictOptions, 'trainer' | 'checkpointFile' | 'signal'>;
  /** The task's verifier (spec `outerLoop.teacher.task`), if any. */
  task?: TaskTeacher;
  /** The task's teacher program (spec `task.teacher.command`) as the revision check, asked before `task`. */
  program?: { name: string; verify(prompt: string, output: string): Promise<boolean | undefined> };
}

export interface ReviseFeedbackResult {
  /** Revisions made now (a retry does not make one twice). */
  revised: number;
  verified: number;
}

export async function reviseFeedback(deps: ActivityDeps, input: ReviseFeedbackInput): Promise<ReviseFeedbackResult> {
  const rows = await critiquedFeedback(deps.db, input.campaignId, input.outerIterationId);
  if (rows.length === 0) return { revised: 0, verified: 0 };
  const done = await revisedCritiqueIds(
    deps.db,
    rows.map((r) => r.id),
  );
  const todo = rows.filter((r) => !done.has(r.id)).map((r) => ({ ...r, revisionPrompt: revisionPromptOf(r.prompt, r.output, r.text) }));
  if (todo.length === 0) return { revised: 0, verified: 0 };
  const outputs = await runPredict({
    ...input.predictor,
    prompts: todo.map((r) => ({
      id: r.id,
      prompt: r.revisionPrompt,
      maxBytes: Math.min(MAX_REVISION_BYTES, Math.max(1, Buffer.byteLength(r.output), Buffer.byteLength(r.correction ?? ''))),
    })),
  });
  const made = [];
  for (const r of todo) {
    const output = outputs.get(r.id)!;
    const verdict = verifyRevision(await taskVerdictOf(input, r.prompt, output), output, r.correction ?? undefined);
    made.push({
      id: revisionIdOf(r.id),
      campaignId: input.campaignId,
      outerIterationId: input.outerIterationId,
      critiqueId: r.id,
      checkpointId: input.checkpointId,
      prompt: r.revisionPrompt,
      output,
      verified: verdict.verified,
      verifiedBy: verdict.by,
    });
  }
  await recordRevisions(deps.db, made);
  return { revised: made.length, verified: made.filter((m) => m.verified).length };
}

/** The task's check of a revision: its program's verdict where it can tell, else the task teacher's verifier's. */
export async function taskVerdictOf(input: ReviseFeedbackInput, prompt: string, output: string): Promise<TaskVerdict | undefined> {
  if (output.trim() === '') return undefined;
  const byProgram = await input.program?.verify(prompt, output);
  if (byProgram !== undefined) return { by: `task:${input.program!.name}`, verdict: byProgram };
  const byTeacher = input.task?.verify?.(prompt, output);
  return input.task && byTeacher !== undefined ? { by: `task:${input.task.name}`, verdict: byTeacher } : undefined;
}
