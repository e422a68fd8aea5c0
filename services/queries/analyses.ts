// The agent's analyses of a campaign (written after each inner-loop batch, see activities/inner/analyze-batch.ts),
// newest first.
import { desc, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { analyses } from '../../db/schema';

export const analysesOf = (db: Db, campaignId: string, limit = 50) =>
  db
    .select({
      created_at: analyses.createdAt,
      inner_loop_id: analyses.innerLoopId,
      start_index: analyses.startIndex,
      author: analyses.author,
      text: analyses.text,
    })
    .from(analyses)
    .where(eq(analyses.campaignId, campaignId))
    .orderBy(desc(analyses.createdAt), desc(analyses.id))
    .limit(limit);
