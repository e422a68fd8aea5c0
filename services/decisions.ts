// Decisions: a campaign's selection, gate and approval records, one row each under a deterministic id
// (`<workflow id>/<kind>`), so recording one again (a retried activity) changes nothing: the first write wins.
import { eq } from 'drizzle-orm';
import type { GateNoiseSummary } from '../contracts/outer-activities';
import type { AlphaFigures, BudgetFigures } from '../core/gate/heldout-budget';
import type { ReferenceSource } from '../core/gate/reference-control';
import { decisions } from '../db/schema';
import type { Queryable } from './queryable';

export type Decision = typeof decisions.$inferSelect;
export type NewDecision = typeof decisions.$inferInsert;

/**
 * What the promotion gate records in `figures` (activities/outer/evaluate-gate.ts). A type, not an interface, so it
 * is a `figures` record as it stands.
 */
export type GateFigures = {
  /** The primary metric's mean improvement, and its p-value. */
  meanDelta?: number;
  pValue?: number;
  noise?: GateNoiseSummary;
  /** The held-out budget this decision spent, and its LORD++ level (core/gate/heldout-budget.ts; the ledger sums them). */
  budget?: BudgetFigures;
  alpha?: AlphaFigures;
  /** Whether the seed reruns, the leak check's reference model, share the candidate's trainer (core/gate/reference-control.ts). */
  referenceControl?: string;
  /** Whose trainer the seed reruns ran, and the campaign version they pinned (absent before the reruns chose one). */
  referenceTrainer?: { source: ReferenceSource; versionId: string };
  candidateCheckpointId?: string;
  incumbentCheckpointId?: string;
  /** The gate settings that applied (core/gate/settings); `metric` is the one it paired. */
  settings?: { metric?: string };
  /** Every check under its rule: passed, reason and its own figures. */
  checks?: Record<string, { passed: boolean; reason: string } & Record<string, unknown>>;
};

/** Any decision's figures: the gate's keys as it writes them, another kind's (an approval's, a selection's) its own. */
export type DecisionFigures = GateFigures & Record<string, unknown>;

/** A decision whose figures are the gate's (promote, reject, hold). */
export type GateDecision = Omit<Decision, 'figures'> & { figures: GateFigures };

/** The decision recorded under `id`, if any. */
export async function decisionById(q: Queryable, id: string): Promise<Decision | undefined> {
  const [row] = await q.select().from(decisions).where(eq(decisions.id, id));
  return row;
}

/** A gate decision by id, its figures read as the gate wrote them. */
export async function gateDecisionById(q: Queryable, id: string): Promise<GateDecision | undefined> {
  // `figures` is a jsonb of Record<string, unknown> in db/schema.ts for every kind; the gate's rows hold GateFigures.
  return (await decisionById(q, id)) as GateDecision | undefined;
}

/** Records `decision` unless its id is recorded already (ON CONFLICT DO NOTHING); true when this call wrote it. */
export async function recordDecision(q: Queryable, decision: NewDecision): Promise<boolean> {
  const written = await q.insert(decisions).values(decision).onConflictDoNothing().returning({ id: decisions.id });
  return written.length > 0;
}
