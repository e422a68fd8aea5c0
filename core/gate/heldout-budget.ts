// The gate's ledger, the pure half: from what a suite version has spent and what the campaign's earlier gates found
// (services/heldout-budget.ts reads both under a lock), grant one decision its Thresholdout answer and its LORD++
// level, refuse it when the budget is spent, and write the figures the next decision's ledger is computed from.
// evaluateGate and bench/heldout-reuse.ts both go through here, so the bench measures the gate that runs.
import { higherIsBetter } from '../eval-suite/suite-metrics';
import { lordGrant, wealthAfter, type AlphaGrant } from './alpha-spending';
import type { GateOutcome } from './checks';
import type { GateEvidence } from './evidence';
import { mean, orientedDeltas, sampleVariance } from './paired-test';
import { budgetSpent, thresholdout, type AnsweredFrom, type HoldoutAnswer, type HoldoutQuery } from './reusable-holdout';
import type { GateSettings } from './settings';

export const BUDGET_RULE = 'heldoutBudgetSpent';

/** What the ledger holds before a decision: units spent on the suite version (all campaigns), the campaign's tests. */
export interface HeldoutLedger {
  spent: number;
  /** Each earlier gate of the campaign that was granted a level, in order: whether its test was a discovery. */
  history: boolean[];
}

/** The decision's `budget` figures: `spent` is this decision's units (the ledger sums them), `remaining` after it. */
export interface BudgetFigures {
  suiteId: string;
  spent: number;
  remaining: number;
  of: number;
  answeredFrom: AnsweredFrom;
  /** The gain the gate claims (Thresholdout's answer), rounded. */
  answer?: number;
}

/** The decision's `alpha` figures: LORD++'s level for this gate, and the campaign's wealth around it. */
export interface AlphaFigures {
  index: number;
  level: number;
  target: number;
  wealthBefore: number;
  wealthAfter: number;
  discovery: boolean;
}

/** The gate's question on this evidence: the mean held-out and public gains on its metric, and their standard error. */
export function holdoutQueryOf(e: GateEvidence): HoldoutQuery {
  const metric = e.settings.metric;
  const items = e.items[metric] ?? [];
  const higher = higherIsBetter(metric);
  const deltas = orientedDeltas(
    items.map((i) => i.candidate),
    items.map((i) => i.incumbent),
    higher,
  );
  const heldoutVar = deltas.length > 0 ? sampleVariance(deltas) / deltas.length : 0;
  const pub = e.integrity?.means?.find((m) => m.metric === metric);
  if (!pub) return { heldout: mean(deltas), scale: Math.sqrt(heldoutVar) };
  const gain = higher ? pub.candidatePublic - pub.incumbentPublic : pub.incumbentPublic - pub.candidatePublic;
  const publicVar = pub.publicSpread && pub.publicSpread.n > 0 ? pub.publicSpread.variance / pub.publicSpread.n : 0;
  return { heldout: mean(deltas), public: gain, scale: Math.sqrt(heldoutVar + publicVar) };
}

/** What the ledger grants this evidence: Thresholdout's answer (when budgeted) and α_t (when spending). */
export function grantOf(
  e: GateEvidence,
  ledger: HeldoutLedger,
  ids: { suiteId: string; decisionId: string },
): NonNullable<GateEvidence['heldoutBudget']> {
  const s = e.settings;
  return {
    ...(s.heldoutBudget.enabled
      ? {
          answer: thresholdout(holdoutQueryOf(e), s.heldoutBudget, {
            spentBefore: ledger.spent,
            suiteSeed: ids.suiteId,
            decisionSeed: ids.decisionId,
          }),
        }
      : {}),
    ...(s.alphaSpending.enabled ? { alpha: lordGrant(ledger.history, s.alpha, s.alphaSpending) } : {}),
  };
}

/** The refusal when the suite version's budget is spent: no check runs, nothing of held-out is read or recorded. */
export function budgetSpentOutcome(suiteId: string, ledger: HeldoutLedger, s: GateSettings): GateOutcome | undefined {
  if (!s.heldoutBudget.enabled || !budgetSpent(ledger.spent, s.heldoutBudget)) return undefined;
  const reason =
    `rejected by ${BUDGET_RULE}: suite "${suiteId}"'s held-out split has given all ${s.heldoutBudget.queries} answers of its budget ` +
    `(${ledger.spent} spent, promotion.heldoutBudget.queries), and reusing it further would let the loop fit its items: ` +
    `register a new suite version with fresh held-out items (\`flywheel suite add\`) and run the campaign on it`;
  return { promote: false, hold: false, rule: BUDGET_RULE, reason, results: [] };
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;

/** The decision's ledger figures: `budget` (when budgeted) and `alpha` (when spending). */
export function ledgerFiguresOf(
  suiteId: string,
  ledger: HeldoutLedger,
  s: GateSettings,
  granted: GateEvidence['heldoutBudget'],
  discovery: boolean,
): { budget?: BudgetFigures; alpha?: AlphaFigures } {
  const out: { budget?: BudgetFigures; alpha?: AlphaFigures } = {};
  if (s.heldoutBudget.enabled) {
    const a: HoldoutAnswer | undefined = granted?.answer;
    const spent = a?.spent ?? 0;
    out.budget = {
      suiteId,
      spent,
      remaining: Math.max(0, s.heldoutBudget.queries - ledger.spent - spent),
      of: s.heldoutBudget.queries,
      answeredFrom: a?.answeredFrom ?? 'none',
      ...(a?.answer === undefined ? {} : { answer: round(a.answer) }),
    };
  }
  const g: AlphaGrant | undefined = granted?.alpha;
  if (g)
    out.alpha = {
      index: g.index,
      level: g.level,
      target: g.target,
      wealthBefore: g.wealthBefore,
      wealthAfter: wealthAfter(g, discovery),
      discovery,
    };
  return out;
}

/** Whether the outcome's paired test rejected its null at the granted level (LORD++'s discovery, whatever else failed). */
export function discoveryOf(outcome: GateOutcome): boolean {
  return outcome.results.find((r) => r.rule === 'heldoutImprovement')?.figures.significant === 'yes';
}

/** One line for the report and the dashboard's gate table: what the decision spent, and its level. */
export function ledgerLine(f: { budget?: BudgetFigures; alpha?: AlphaFigures }): string | undefined {
  const parts: string[] = [];
  if (f.budget)
    parts.push(
      f.budget.answeredFrom === 'none'
        ? `held-out budget spent (${f.budget.of} of ${f.budget.of}): nothing answered`
        : `held-out budget: spent ${f.budget.spent} (answered from ${f.budget.answeredFrom}), ${f.budget.remaining} of ${f.budget.of} left`,
    );
  if (f.alpha)
    parts.push(
      `α_${f.alpha.index} ${f.alpha.level.toPrecision(3)} of ${f.alpha.target} (wealth ${f.alpha.wealthBefore.toPrecision(3)} → ${f.alpha.wealthAfter.toPrecision(3)}${f.alpha.discovery ? ', a discovery' : ''})`,
    );
  return parts.length > 0 ? parts.join('; ') : undefined;
}
