// How the CLI shows an outer loop: one line per phase, the evidence of a promotion awaiting approval (with the
// command that answers it), and the iterations' summaries as a table.
import { decisionLines } from '../core/gate/decision-lines';
import type { OuterIterationSummary, OuterLoopStatus, PromotionEvidence } from '../contracts/outer-loop';

const num = (v: number | undefined, digits = 4): string => (v === undefined ? '-' : v.toFixed(digits));
const signed = (v: number, digits = 4): string => `${v >= 0 ? '+' : ''}${v.toFixed(digits)}`;
const show = (v: unknown): string => (typeof v === 'string' ? v : (JSON.stringify(v) ?? 'unset'));

/** `iteration 3  inner-loop  (inner loop demo/outer/i3/inner)`; equal lines mean nothing changed. */
export function phaseLine(st: OuterLoopStatus): string {
  return [`iteration ${st.iteration ?? '-'}`, st.phase, st.innerLoopId ? `(inner loop ${st.innerLoopId})` : ''].filter(Boolean).join('  ');
}

/** The command that answers a pending promotion. */
export const promoteCommand = (campaignId: string): string => `flywheel promote ${campaignId} --approve | --reject [--note TEXT]`;

export function formatEvidence(e: PromotionEvidence, campaignId: string): string {
  const lines = [
    `promotion awaiting approval (${e.outerIterationId}): candidate ${e.candidateCheckpointId} vs production ${e.incumbentCheckpointId}`,
    `  gate: ${e.gate.promote ? 'PROMOTE' : 'HOLD'} (${e.gate.rule}): ${decisionLines(e.gate.reason).verdict}`,
    ...e.gate.checks.map((c) => `    ${c.passed ? 'pass' : 'FAIL'}  ${c.rule}: ${c.reason}`),
    '  held-out, candidate minus production (positive = better):',
    ...(e.categoryDeltas.length
      ? e.categoryDeltas.map((d) => `    ${`${d.metric} / ${d.category}`.padEnd(32)} ${signed(d.delta).padStart(9)}  (${d.items} items)`)
      : ['    (none)']),
    `  cost: ${Math.round(e.cost.trainerSeconds)} trainer-seconds over ${e.cost.experiments} experiments`,
    `  config diff (production → candidate): ${e.configDiff.length ? e.configDiff.map(([k, from, to]) => `${k} ${show(from)} → ${show(to)}`).join(', ') : 'none'}`,
    `  deadline: ${e.deadline}, then it is ${e.defaultDecision === 'promote' ? 'promoted' : 'rejected'} by default`,
    `  answer with: ${promoteCommand(campaignId)}`,
  ];
  return lines.join('\n');
}

/**
 * One row per iteration: what it did, what it scored on held-out, and its verdict; then the last decision's checks,
 * one a line (a reason in full is ~1,500 characters).
 */
export function formatIterations(done: OuterIterationSummary[]): string {
  if (done.length === 0) return 'no iteration finished';
  const header = ['iter', 'status', 'feedback', 'critiques', 'dataset', 'held-out cand/incumb', 'reason'];
  const rows = done.map((s) => [
    String(s.iteration),
    s.status,
    String(s.newFeedback),
    String(s.critiques),
    s.datasetVersionId ? `${s.datasetVersionId}${s.datasetExamples !== undefined ? ` (${s.datasetExamples})` : ''}` : '-',
    s.heldout ? `${s.heldout.metric} ${num(s.heldout.candidate)}/${num(s.heldout.incumbent)}` : '-',
    decisionLines(s.reason).verdict,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  // The reason (last column) is left unpadded: it is free text.
  const table = [header, ...rows].map((r) => r.map((v, i) => (i === r.length - 1 ? v : v.padEnd(widths[i]))).join('  '));
  const last = done.at(-1)!;
  const { checks } = decisionLines(last.reason);
  return [...table, ...(checks.length ? [`iteration ${last.iteration}'s checks:`, ...checks.map((c) => `  ${c}`)] : [])].join('\n');
}
