// critiqueIterationFeedback: the teacher step of one outer iteration over user signals. From the feedback events
// the iteration ingested, it draws a seeded sample of the failures (edits, rejects, low ratings) and has the
// campaign's teacher (spec `outerLoop.teacher`) critique each one (critiqueFeedback), so the critiques are linked to both their event and their iteration.
import { sampleFailingFeedback } from '../../services/feedback-events';
import { campaignsOf, type ActivityDeps } from '../deps';
import { FAILING_RATING, critiqueFeedback } from './critique-feedback';
import { teacherChoiceOf } from './teach-failures';
import type { CritiqueIterationInput, CritiqueIterationResult } from '../../contracts/outer-activities';

export async function critiqueIterationFeedback(deps: ActivityDeps, input: CritiqueIterationInput): Promise<CritiqueIterationResult> {
  const { failures, sampled } = await sampleFailingFeedback(deps.db, input.outerIterationId, FAILING_RATING, input.seed, input.sample);
  // The spec is read only when there is something to critique: it names the teacher.
  const choice = sampled.length > 0 ? teacherChoiceOf(deps, await campaignsOf(deps).resolve(input.campaignVersionId)) : undefined;
  const r = await critiqueFeedback(
    deps.db,
    { campaignId: input.campaignId, eventIds: sampled, outerIterationId: input.outerIterationId },
    choice,
  );
  return { failures, sampled: sampled.length, counts: r.counts };
}
