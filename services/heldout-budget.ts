// The gate's ledger, kept in the gate decisions' own figures (no table of its own): what a suite version's held-out
// split has spent, over every campaign, and which of a campaign's earlier tests were discoveries. Read and written
// under advisory locks, so two gates running at once cannot both spend the last unit (core/gate/heldout-budget.ts
// is the pure half).
import { and, asc, eq, sql } from 'drizzle-orm';
import type { HeldoutLedger } from '../core/gate/heldout-budget';
import type { Db } from '../db/client';
import { decisions, heldoutReads } from '../db/schema';
import type { Queryable } from './queryable';

/** The advisory-lock namespaces (the second key is the suite version's or the campaign's hash). */
const SUITE_BUDGET_LOCK = 0x46_77_48_62; // "FwHb"
const CAMPAIGN_ALPHA_LOCK = 0x46_77_41_6c; // "FwAl"

/**
 * Units the suite version's held-out split has spent: every gate decision that read it (its `heldout_reads` row) counts
 * its recorded `budget.spent`; one recorded before the budget existed counts 1, since it answered from held-out, exactly.
 * A read whose attempt recorded no decision answered nothing and counts 0. `exceptDecisionId` leaves the caller out.
 */
export async function heldoutSpent(q: Queryable, suiteId: string, exceptDecisionId?: string): Promise<number> {
  const rows = await q
    .select({ id: decisions.id, figures: decisions.figures })
    .from(decisions)
    .innerJoin(heldoutReads, eq(heldoutReads.reader, sql`'evaluateGate:' || ${decisions.id}`))
    .where(and(eq(heldoutReads.suiteId, suiteId), eq(heldoutReads.purpose, 'gate')));
  const spentBy = new Map<string, number>();
  for (const { id, figures } of rows) {
    if (id === exceptDecisionId) continue;
    const budget = figures.budget as { spent?: unknown } | undefined;
    spentBy.set(id, typeof budget?.spent === 'number' ? budget.spent : 1);
  }
  let spent = 0;
  for (const s of spentBy.values()) spent += s;
  return spent;
}

/** The campaign's earlier gates that were granted a level, in the order they were decided: whether each was a discovery. */
export async function alphaHistory(q: Queryable, campaignId: string, exceptDecisionId?: string): Promise<boolean[]> {
  const rows = await q
    .select({ id: decisions.id, figures: decisions.figures })
    .from(decisions)
    .where(eq(decisions.campaignId, campaignId))
    .orderBy(asc(decisions.createdAt), asc(decisions.id));
  return rows.flatMap(({ id, figures }) => {
    const alpha = figures.alpha as { discovery?: unknown } | undefined;
    return id !== exceptDecisionId && alpha && typeof alpha === 'object' ? [alpha.discovery === true] : [];
  });
}

/**
 * Runs `fn` in one transaction holding the campaign's and the suite version's ledger locks (in that order, everywhere),
 * with the ledger as it stands; whatever `fn` records on `tx` is seen by the next holder.
 */
export async function withHeldoutLedger<T>(
  db: Db,
  key: { suiteId: string; campaignId: string; decisionId: string },
  fn: (tx: Queryable, ledger: HeldoutLedger) => Promise<T>,
): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${CAMPAIGN_ALPHA_LOCK}, hashtext(${key.campaignId}))`);
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${SUITE_BUDGET_LOCK}, hashtext(${key.suiteId}))`);
    const ledger = {
      spent: await heldoutSpent(tx, key.suiteId, key.decisionId),
      history: await alphaHistory(tx, key.campaignId, key.decisionId),
    };
    return fn(tx, ledger);
  });
}
