// What scoring a checkpoint reads of a suite: its items of a public split (public, probe: held-out items come only
// through the logged read, heldout-items.ts) and its settings (rubrics, canaries).
import { and, eq } from 'drizzle-orm';
import type { SuiteSettings } from '../../core/eval-suite/suite-schema';
import { evalItems, evalSuites } from '../../db/schema';
import type { Queryable } from '../queryable';

export type EvalItem = typeof evalItems.$inferSelect;

/** The suite's items of `split`; never held-out ones (readHeldoutItems logs each held-out read). */
export async function splitItems(q: Queryable, suiteId: string, split: 'public' | 'probe'): Promise<EvalItem[]> {
  return q
    .select()
    .from(evalItems)
    .where(and(eq(evalItems.suiteId, suiteId), eq(evalItems.split, split)));
}

/** The suite's settings; empty for an unknown suite. */
export async function suiteSettings(q: Queryable, suiteId: string): Promise<SuiteSettings> {
  const [suite] = await q.select({ settings: evalSuites.settings }).from(evalSuites).where(eq(evalSuites.id, suiteId));
  return suite?.settings ?? {};
}
