// evaluateGate: the outer loop's promotion gate as an activity. Reads both checkpoints' held-out scores and the
// suite's held-out item categories (never their text), runs the gate's checks, and records one decision with
// every check's rule, figures and reason. Idempotent by `decisionId`: a retry returns the recorded decision.
import { ApplicationFailure } from '@temporalio/activity';
import { itemsOfMetric, type MetricItem } from '../../core/eval-suite/suite-metrics';
import { NotFoundError } from '../../core/errors';
import { pairedMetricsOf, runGate, type GateOutcome } from '../../core/gate/checks';
import type { PairedItem } from '../../core/gate/evidence';
import type { GateEvidence } from '../../core/gate/evidence';
import { gateSettingsWithDefaults, type GateMetric } from '../../core/gate/settings';
import type { Db } from '../../db/client';
import { gateDecisionById, recordDecision, type GateDecision, type GateFigures } from '../../services/decisions';
import { withHeldoutLedger } from '../../services/heldout-budget';
import { budgetSpentOutcome, discoveryOf, grantOf, ledgerFiguresOf } from '../../core/gate/heldout-budget';
import { itemCategories } from '../../services/suites/suite-items';
import { logHeldoutRead } from '../../services/suites/heldout-items';
import { scoresOfCheckpoints, splitScores } from '../../services/eval-results';
import { experimentById } from '../../services/experiments';
import { loadIntegrityEvidence } from './integrity-evidence';
import { loadSeedReference, rerunTrainerOf } from './seed-reference';
import { fallback as anchorFallback, loadCategoryAnchor } from './category-anchor';
import { BASELINE_PROPOSER } from '../../contracts/experiment';
import { gateNoiseOf, noiseSummaryOf } from '../../core/gate/noise-check';
import type { EvaluateGateInput, GateSummary } from '../../contracts/outer-activities';

export async function evaluateGate(db: Db, input: EvaluateGateInput): Promise<GateSummary> {
  const recorded = await gateDecisionById(db, input.decisionId);
  if (recorded) return summaryOf(recorded, input);

  const settings = gateSettingsWithDefaults(input.settings);
  // Under the ledger's locks (services/heldout-budget.ts): the suite version's spent budget and the campaign's earlier
  // tests are read, the held-out split is read and this decision recorded, so no two gates spend the same last unit.
  await withHeldoutLedger(db, input, async (tx, ledger) => {
    // An attempt that waited on the lock may find its decision recorded by another: it spends nothing twice.
    if (await gateDecisionById(tx, input.decisionId)) return;
    const decision = { id: input.decisionId, campaignId: input.campaignId, checkpointId: input.candidateCheckpointId };
    const refused = budgetSpentOutcome(input.suiteId, ledger, settings);
    if (refused) {
      // Nothing of held-out is read: the refusal says so, and asks for fresh items.
      const figures = { ...ledgerFiguresOf(input.suiteId, ledger, settings, undefined, false), settings, checks: {} };
      await recordDecision(tx, { ...decision, kind: 'reject', rule: refused.rule, reason: refused.reason, figures, accepted: false });
      return;
    }
    const evidence = await loadGateEvidence(db, input, settings);
    evidence.heldoutBudget = grantOf(evidence, ledger, input);
    const outcome = runGate(evidence);
    const spent = ledgerFiguresOf(input.suiteId, ledger, settings, evidence.heldoutBudget, discoveryOf(outcome));
    await recordDecision(tx, {
      ...decision,
      kind: outcome.promote ? 'promote' : outcome.hold ? 'hold' : 'reject',
      experimentId: evidence.candidateExperimentId,
      rule: outcome.rule,
      reason: outcome.reason,
      figures: { ...figuresOf(evidence, outcome), ...spent },
      accepted: outcome.promote,
    });
  });
  // Another attempt may have won the insert race: report what is recorded, not what this attempt computed.
  return summaryOf((await gateDecisionById(db, input.decisionId))!, input);
}

/** What the gate's checks read: both checkpoints' paired held-out items, the hacking guard's evidence, the seed reruns' scores. */
export async function loadGateEvidence(
  db: Db,
  input: EvaluateGateInput,
  settings: GateEvidence['settings'],
): Promise<GateEvidence & { candidateExperimentId: string }> {
  const scoresOf = async (checkpointId: string, role: string) => {
    const row = await splitScores(db, checkpointId, input.suiteId, 'heldout');
    if (!row)
      throw new NotFoundError(
        `the ${role} checkpoint "${checkpointId}" has no held-out result on suite "${input.suiteId}": run scoreCheckpoint on its heldout split (purpose "gate") first`,
      );
    return row;
  };
  const candidate = await scoresOf(input.candidateCheckpointId, 'candidate');
  const incumbent = await scoresOf(input.incumbentCheckpointId, 'incumbent');

  // Only ids, graders and categories: held-out prompts and references never leave the eval activity.
  const all = await itemCategories(db, input.suiteId, ['heldout']);
  // The metrics the gate pairs, and which held-out items make up each (core/eval-suite/suite-metrics itemsOfMetric).
  const selectors = pairedMetricsOf(settings.metric).flatMap((metric) => {
    const selects = itemsOfMetric(metric);
    return selects ? [{ metric, selects }] : [];
  });
  const metricsOfItem = (i: MetricItem) => selectors.filter((s) => s.selects(i)).map((s) => s.metric);
  const items = all.filter((i) => metricsOfItem(i).length > 0);
  if (items.length === 0) throw new NotFoundError(`eval suite "${input.suiteId}" has no held-out items: prepare the suite first`);
  await logHeldoutRead(db, input.suiteId, `evaluateGate:${input.decisionId}`, 'gate');

  // The seed reruns as a reference model that never saw held-out text: heldoutOutrunsPublic's second control.
  const reference = await loadSeedReference(db, input.suiteId, input.seedRerunCheckpointIds ?? []);
  // The fixed reference of the per-category bound (activities/outer/category-anchor.ts).
  const { anchor, perItem: anchorScores } = await loadCategoryAnchor(db, { ...input, setting: settings.anchor });
  const byMetric: Partial<Record<GateMetric, PairedItem[]>> = {};
  const primary = new Map<string, PairedItem>();
  const unscored = new Map<string, number>();
  for (const item of items) {
    const c = candidate.perItem[item.id];
    const i = incumbent.perItem[item.id];
    // A grader a checkpoint format cannot be scored on (loss of an unreadable format) is absent for both.
    if (c === undefined && i === undefined) continue;
    if (c === undefined || i === undefined) {
      const missing = c === undefined ? input.candidateCheckpointId : input.incumbentCheckpointId;
      unscored.set(missing, (unscored.get(missing) ?? 0) + 1);
      continue;
    }
    const r = reference?.heldout[item.id];
    const a = anchorScores?.[item.id];
    const paired: PairedItem = {
      category: item.category,
      candidate: c,
      incumbent: i,
      ...(r === undefined ? {} : { reference: r }),
      // Its source file (the cluster its signs flip with) and its reference's bytes (its weight in bits per byte).
      ...(item.sourceFile ? { cluster: item.sourceFile } : {}),
      ...(item.referenceBytes > 0 ? { bytes: item.referenceBytes } : {}),
      ...(a === undefined ? {} : { anchor: a }),
    };
    for (const metric of metricsOfItem(item)) (byMetric[metric] ??= []).push(paired);
    if (metricsOfItem(item).includes(settings.metric)) primary.set(item.id, paired);
  }
  const allPaired = new Set(Object.values(byMetric).flatMap((list) => list ?? []));
  const unanchored = anchorScores ? [...allPaired].filter((p) => p.anchor === undefined).length : 0;
  if (unscored.size > 0) {
    const which = [...unscored].map(([ckpt, n]) => `"${ckpt}" lacks ${n}`).join(', ');
    throw new NotFoundError(
      `held-out scores on suite "${input.suiteId}" do not pair up (${which} items the other has): rescore on the current suite's heldout split first`,
    );
  }
  const heldout: Partial<Record<GateMetric, { candidate: number; incumbent: number }>> = {};
  for (const [metric, paired] of Object.entries(byMetric) as [GateMetric, PairedItem[]][]) {
    const meanOf = (f: (p: PairedItem) => number) => paired.reduce((s, p) => s + f(p), 0) / paired.length;
    heldout[metric] = { candidate: meanOf((p) => p.candidate), incumbent: meanOf((p) => p.incumbent) };
  }
  const integrity = await loadIntegrityEvidence(db, {
    suiteId: input.suiteId,
    candidateCheckpointId: input.candidateCheckpointId,
    incumbentCheckpointId: input.incumbentCheckpointId,
    heldout,
    ...(reference ? { reference: { reruns: reference.reruns, public: reference.public } } : {}),
  });
  return {
    candidateCheckpointId: input.candidateCheckpointId,
    incumbentCheckpointId: input.incumbentCheckpointId,
    items: byMetric,
    settings,
    integrity,
    seedScores: await seedScoresOf(db, input, primary),
    anchor: unanchored > 0 ? anchorFallback(anchor, input.incumbentCheckpointId, `it lacks ${unanchored} paired held-out scores`) : anchor,
    incumbentUntrained: await isBaseline(db, incumbent.experimentId),
    ...(reference ? await referenceTrainerEvidence(db, input.seedRerunCheckpointIds ?? []) : {}),
    candidateExperimentId: candidate.experimentId,
  };
}

/**
 * The held-out score of each seed rerun (input.seedRerunCheckpointIds) on the gate's metric: the mean over the same
 * items the candidate and the incumbent are paired on. A rerun not scored on every one of them is left out (the
 * decision says how many went in). These scores measure noise only: no rerun is ever a candidate.
 */
async function seedScoresOf(db: Db, input: EvaluateGateInput, items: Map<string, PairedItem>): Promise<number[]> {
  const ids = input.seedRerunCheckpointIds ?? [];
  if (ids.length === 0 || items.size === 0) return [];
  const rows = await scoresOfCheckpoints(db, input.suiteId, ids, ['heldout']);
  const scores: number[] = [];
  for (const { perItem } of rows) {
    const values = [...items.keys()].map((id) => perItem[id]);
    if (!values.every((v) => v !== undefined)) continue;
    scores.push(values.reduce((s, v) => s + v, 0) / values.length);
    // Each item's scores across the reruns, in this order: σ_seed's per-item part (core/gate/noise-check.ts seedSpread).
    [...items.values()].forEach((p, k) => (p.seeds ??= []).push(values[k]));
  }
  return scores;
}

/** Whose trainer the reruns ran (their group's record): whether it is code the candidate could have written. */
async function referenceTrainerEvidence(db: Db, rerunCheckpointIds: readonly string[]): Promise<Partial<GateEvidence>> {
  const ran = await rerunTrainerOf(db, rerunCheckpointIds);
  if (!ran) return {};
  return {
    referenceControl: ran.control,
    ...(ran.source && ran.versionId ? { referenceTrainer: { source: ran.source, versionId: ran.versionId } } : {}),
  };
}

/** The experiment is a search's untrained baseline (zero steps: the same model from any seed). */
async function isBaseline(db: Db, experimentId: string): Promise<boolean> {
  return (await experimentById(db, experimentId))?.proposer === BASELINE_PROPOSER;
}

/** Every check's figures under its rule, the summary figures at the top, and the settings that applied. */
function figuresOf(evidence: GateEvidence, outcome: GateOutcome): GateFigures {
  const primary = outcome.results.find((r) => r.rule === 'heldoutImprovement')?.figures;
  const noise = gateNoiseOf(evidence);
  return {
    meanDelta: typeof primary?.meanDelta === 'number' ? primary.meanDelta : 0,
    pValue: typeof primary?.pValue === 'number' ? primary.pValue : 1,
    ...(noise ? { noise: noiseSummaryOf(noise, evidence.settings.noise.enabled) } : {}),
    candidateCheckpointId: evidence.candidateCheckpointId,
    incumbentCheckpointId: evidence.incumbentCheckpointId,
    ...(evidence.referenceControl ? { referenceControl: evidence.referenceControl } : {}),
    ...(evidence.referenceTrainer ? { referenceTrainer: evidence.referenceTrainer } : {}),
    settings: evidence.settings,
    checks: Object.fromEntries(outcome.results.map((r) => [r.rule, { passed: r.passed, reason: r.reason, ...r.figures }])),
  };
}

function summaryOf(row: GateDecision, input: EvaluateGateInput): GateSummary {
  if (row.checkpointId !== input.candidateCheckpointId || row.campaignId !== input.campaignId) {
    // A reused decision id is a caller bug that no retry can fix.
    throw ApplicationFailure.nonRetryable(
      `decision "${input.decisionId}" is already recorded for checkpoint "${row.checkpointId}" of campaign "${row.campaignId}", not "${input.candidateCheckpointId}"`,
      'DecisionConflictError',
    );
  }
  const { figures } = row;
  return {
    ...(figures.noise ? { noise: figures.noise } : {}),
    promote: row.kind === 'promote',
    hold: row.kind === 'hold',
    rule: row.rule,
    reason: row.reason,
    meanDelta: typeof figures.meanDelta === 'number' ? figures.meanDelta : 0,
    pValue: typeof figures.pValue === 'number' ? figures.pValue : 1,
  };
}
