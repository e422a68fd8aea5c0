// The analyst's latest account of an inner loop's batches, as `flywheel status` shows it (and reports may read it).
import { desc, eq } from 'drizzle-orm';
import type { Db } from '../db/client';
import { analyses } from '../db/schema';

export type Analysis = typeof analyses.$inferSelect;

export async function latestAnalysis(db: Db, innerLoopId: string): Promise<Analysis | undefined> {
  const [row] = await db.select().from(analyses).where(eq(analyses.innerLoopId, innerLoopId)).orderBy(desc(analyses.startIndex)).limit(1);
  return row;
}

export function formatAnalysis(a: Analysis): string {
  return `analysis of the batch from e${a.startIndex} (${a.author === 'builtin' ? 'built-in analyst' : `analyst model "${a.author}"`}):\n  ${a.text}`;
}
