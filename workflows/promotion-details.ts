// The Temporal UI's "current details" of an outer loop awaiting approval: the evidence as Markdown, and how to
// answer (the `approvePromotion` update from the UI, or `flywheel promote`). Pure, so workflow code may call it.
import type { PromotionEvidence } from '../contracts/outer-loop';

export function promotionDetails(campaignId: string, e: PromotionEvidence): string {
  const fmt = (v: unknown) => (typeof v === 'number' ? String(Math.round(v * 1e4) / 1e4) : JSON.stringify(v));
  return [
    e.gate.promote
      ? `## Promotion awaits approval: ${e.candidateCheckpointId}`
      : `## Held by the gate, awaits approval: ${e.candidateCheckpointId}`,
    `Gate: **${e.gate.promote ? 'passed' : 'held'}** (${e.gate.rule}): ${e.gate.reason}`,
    '',
    ...e.gate.checks.map((c) => `- ${c.passed ? '✓' : '✗'} ${c.rule}: ${c.reason}`),
    '',
    '| metric | category | held-out Δ (+ is better) | items |',
    '| --- | --- | --- | --- |',
    ...e.categoryDeltas.map((d) => `| ${d.metric} | ${d.category} | ${fmt(d.delta)} | ${d.items} |`),
    '',
    `Cost: ${e.cost.experiments} experiments, ${e.cost.trainerSeconds} trainer-seconds.`,
    `Configuration vs production (${e.incumbentCheckpointId}): ${e.configDiff.map(([k, a, b]) => `${k} ${fmt(a)} → ${fmt(b)}`).join(', ') || 'no difference'}.`,
    '',
    `Answer with the update \`approvePromotion\` and \`{"approve": true, "by": "your name"}\` (or \`false\`), or \`flywheel promote ${campaignId} --approve\`. At ${e.deadline} the default applies: **${e.defaultDecision}**.`,
  ].join('\n');
}
