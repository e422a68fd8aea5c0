// Gate and selection decisions with their rule and figures, newest first.
import { and, asc, count, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { decisions } from '../../db/schema';
import type { DecisionFigures } from '../decisions';

const columns = {
  id: decisions.id,
  kind: decisions.kind,
  checkpoint_id: decisions.checkpointId,
  experiment_id: decisions.experimentId,
  rule: decisions.rule,
  reason: decisions.reason,
  /** jsonb, a Record<string, unknown> for every kind in db/schema.ts: the gate's keys are typed here. */
  figures: sql<DecisionFigures>`${decisions.figures}`,
  accepted: decisions.accepted,
  created_at: decisions.createdAt,
};

export type DecisionRow = Awaited<ReturnType<typeof decisionsOf>>[number];

export const decisionsOf = (db: Db, campaignId: string, limit: number, offset: number) =>
  db
    .select(columns)
    .from(decisions)
    .where(eq(decisions.campaignId, campaignId))
    .orderBy(desc(decisions.createdAt), asc(decisions.id))
    .limit(limit)
    .offset(offset);

export const countDecisions = async (db: Db, campaignId: string): Promise<number> =>
  (await db.select({ n: count() }).from(decisions).where(eq(decisions.campaignId, campaignId)))[0]?.n ?? 0;

/** A campaign's promotion-gate decisions: promote, reject or hold, with the gate's checks in their figures. */
const gateDecisionsWhere = (campaignId: string) =>
  and(eq(decisions.campaignId, campaignId), inArray(decisions.kind, ['promote', 'reject', 'hold']), sql`${decisions.figures} ? 'checks'`);

/** The promotion gate's decisions (promote, reject, hold) of a campaign, oldest first, with every check's figures. */
export const gateDecisionsOf = (db: Db, campaignId: string): Promise<DecisionRow[]> =>
  db.select(columns).from(decisions).where(gateDecisionsWhere(campaignId)).orderBy(decisions.createdAt, decisions.id);

/** Decisions that name an experiment (its selection, its gate). */
export const decisionsOfExperiment = (db: Db, experimentId: string): Promise<DecisionRow[]> =>
  db.select(columns).from(decisions).where(eq(decisions.experimentId, experimentId)).orderBy(decisions.createdAt);

/** The campaign's latest promotion-gate decision (promote, reject or hold), or undefined before its first. */
export const lastGateDecisionOf = async (db: Db, campaignId: string): Promise<DecisionRow | undefined> =>
  (
    await db
      .select(columns)
      .from(decisions)
      .where(gateDecisionsWhere(campaignId))
      .orderBy(desc(decisions.createdAt), desc(decisions.id))
      .limit(1)
  )[0];
