// critiqueIterationFeedback: the teacher step of one outer iteration over user signals. From the feedback events
// the iteration ingested, it draws a seeded sample of the failures (edits, rejects, low ratings) and has the
// campaign's teacher (spec `outerLoop.teacher`) critique each one (critiqueFeedback), so the critiques are linked to both their event and their iteration.
import { and, eq, inArray, lte, or, sql } from 'drizzle-orm';
import { feedbackEvents } from '../../db/schema';

import { campaignsOf, type ActivityDeps } from '../deps';
import { FAILING_RATING, critiqueFeedback } from './critique-feedback';
import { teacherChoiceOf } from './teach-failures';
import type { CritiqueIterationInput, CritiqueIterationResult } from '../../contracts/outer-activities';

export async function critiqueIterationFeedback(deps: ActivityDeps, input: CritiqueIterationInput): Promise<CritiqueIterationResult> {
  const failing = and(
    eq(feedbackEvents.ingestedBy, input.outerIterationId),
    or(
      inArray(feedbackEvents.kind, ['edit', 'reject']),
      and(eq(feedbackEvents.kind, 'rating'), lte(feedbackEvents.rating, FAILING_RATING)),
    ),
  );
  const [{ n }] = await deps.db
    .select({ n: sql<number>`count(*)::int` })
    .from(feedbackEvents)
    .where(failing);
  const sampled = await deps.db
    .select({ id: feedbackEvents.id })
    .from(feedbackEvents)
    .where(failing)
    .orderBy(sql`md5(${feedbackEvents.id} || ${String(input.seed)})`)
    .limit(input.sample);
  // The spec is read only when there is something to critique: it names the teacher.
  const choice = sampled.length > 0 ? teacherChoiceOf(deps, await campaignsOf(deps).resolve(input.campaignVersionId)) : undefined;
  const r = await critiqueFeedback(
    deps.db,
    { campaignId: input.campaignId, eventIds: sampled.map((e) => e.id), outerIterationId: input.outerIterationId },
    choice,
  );
  return { failures: n, sampled: sampled.length, counts: r.counts };
}
