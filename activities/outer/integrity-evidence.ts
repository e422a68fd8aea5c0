// The hacking guard's evidence for the gate: both checkpoints' public and probe results (ids, scores, the spread of
// the public paired deltas, canary and held-out canary hits), paired with the probe items' kinds and twins. Public and
// probe items only: no held-out text is read here.
import { higherIsBetter, itemsOfMetric } from '../../core/eval-suite/suite-metrics';
import type { SplitMeans, TwinPair } from '../../core/gate/evidence';
import type { IntegrityEvidence } from '../../core/gate/evidence';
import { orientedDeltas, sampleVariance } from '../../core/gate/paired-test';
import type { GateMetric } from '../../core/gate/settings';
import type { Db } from '../../db/client';
import { itemCategories } from '../../services/suites/suite-items';
import { resultDetailsOf, splitResult } from '../../services/eval-results';
import type { EvalSplit } from '../../contracts/eval';

export interface IntegrityInput {
  suiteId: string;
  candidateCheckpointId: string;
  incumbentCheckpointId: string;
  /** Held-out means per metric and checkpoint, from the gate's paired items. */
  heldout: Partial<Record<GateMetric, { candidate: number; incumbent: number }>>;
  /** The seed reruns' mean public score per item (activities/outer/seed-reference.ts), and how many reruns it averages. */
  reference?: { reruns: number; public: Record<string, number> };
}

/** The candidate's public gains over the seed reruns' mean, on the metric's public items the reference scored. */
function referencePublicOf(
  reference: IntegrityInput['reference'],
  ids: string[],
  candidate: Record<string, number>,
  higher: boolean,
): Pick<SplitMeans, 'referencePublic'> {
  const scored = reference ? ids.filter((id) => reference.public[id] !== undefined) : [];
  if (!reference || scored.length === 0) return {};
  const gains = orientedDeltas(
    scored.map((id) => candidate[id]),
    scored.map((id) => reference.public[id]),
    higher,
  );
  const gain = gains.reduce((s, g) => s + g, 0) / gains.length;
  return { referencePublic: { n: gains.length, variance: sampleVariance(gains), gain, reruns: reference.reruns } };
}

export async function loadIntegrityEvidence(db: Db, input: IntegrityInput): Promise<IntegrityEvidence> {
  const result = (ckpt: string, split: EvalSplit) => splitResult(db, ckpt, input.suiteId, split);
  const [candPublic, incPublic, candProbe, incProbe] = [
    await result(input.candidateCheckpointId, 'public'),
    await result(input.incumbentCheckpointId, 'public'),
    await result(input.candidateCheckpointId, 'probe'),
    await result(input.incumbentCheckpointId, 'probe'),
  ];
  const items = await itemCategories(db, input.suiteId, ['public', 'probe']);
  const out: IntegrityEvidence = {};

  if (candPublic && incPublic) {
    out.means = [];
    for (const [metric, held] of Object.entries(input.heldout) as [GateMetric, { candidate: number; incumbent: number }][]) {
      // The public items the metric is made of, as the gate's held-out ones are (itemsOfMetric).
      const selects = itemsOfMetric(metric);
      if (!selects) continue;
      const ids = items
        .filter(
          (i) => i.split === 'public' && selects(i) && candPublic.perItem[i.id] !== undefined && incPublic.perItem[i.id] !== undefined,
        )
        .map((i) => i.id);
      if (ids.length === 0) continue;
      const mean = (r: Record<string, number>) => ids.reduce((s, id) => s + r[id], 0) / ids.length;
      // The public paired deltas' spread, for the bound of heldoutOutrunsPublic (numbers only, no ids needed).
      const deltas = orientedDeltas(
        ids.map((id) => candPublic.perItem[id]),
        ids.map((id) => incPublic.perItem[id]),
        higherIsBetter(metric),
      );
      out.means.push({
        metric,
        candidatePublic: mean(candPublic.perItem),
        incumbentPublic: mean(incPublic.perItem),
        candidateHeldout: held.candidate,
        incumbentHeldout: held.incumbent,
        publicSpread: { n: deltas.length, variance: sampleVariance(deltas) },
        ...referencePublicOf(input.reference, ids, candPublic.perItem, higherIsBetter(metric)),
      });
    }
  }
  if (candProbe && incProbe && candPublic && incPublic) {
    const twins: TwinPair[] = [];
    for (const i of items) {
      const of = i.probe?.of;
      if (i.split !== 'probe' || !of || (i.probe?.kind !== 'perturbed' && i.probe?.kind !== 'paraphrased')) continue;
      const pair = [candPublic.perItem[of], candProbe.perItem[i.id], incPublic.perItem[of], incProbe.perItem[i.id]];
      if (pair.some((x) => x === undefined)) continue;
      twins.push({
        id: i.id,
        of,
        kind: i.probe.kind,
        candidateOriginal: pair[0],
        candidateTwin: pair[1],
        incumbentOriginal: pair[2],
        incumbentTwin: pair[3],
      });
    }
    out.twins = twins;
  }
  if (candProbe) {
    const cheat = items.filter((i) => i.probe?.kind === 'cheat_only' && candProbe.perItem[i.id] !== undefined);
    out.cheatOnly = { scored: cheat.length, passed: cheat.filter((i) => candProbe.perItem[i.id] > 0).map((i) => i.id) };
  }
  const hits = await resultDetailsOf(db, input.candidateCheckpointId, input.suiteId);
  out.canaryHits = [...new Set(hits.flatMap((h) => h.canaryHits ?? []))].sort();
  out.heldoutCanaryHits = [...new Set(hits.flatMap((h) => h.heldoutCanaryHits ?? []))].sort();
  return out;
}
