// Renders a loop snapshot as text: a bar per running experiment, the leaderboard, the best public score.
import type { Params } from '../core/spec';
import type { LoopSnapshot } from './loop-progress';

export function bar(fraction: number, width = 24): string {
  const f = Math.max(0, Math.min(1, fraction));
  const full = Math.round(f * width);
  return `[${'#'.repeat(full)}${'.'.repeat(width - full)}] ${(f * 100).toFixed(0).padStart(3)}%`;
}

export function formatParams(p: Params): string {
  return Object.entries(p)
    .map(([k, v]) => `${k}=${typeof v === 'number' && !Number.isInteger(v) ? v.toPrecision(3) : String(v)}`)
    .join(' ');
}

const shortId = (id: string) => id.slice(id.lastIndexOf('/') + 1);

export function renderSnapshot(s: LoopSnapshot, metric: string, top = 5): string {
  const lines: string[] = [];
  const st = s.status;
  lines.push(`phase ${st.phase}  experiments ${st.launched}/${st.budget}  parallel ${st.parallelism}  best ${st.best ? `${st.best.score.toFixed(4)} (${shortId(st.best.experimentId)})` : '–'}`);
  for (const r of s.running) {
    const frac = r.totalSteps > 0 ? r.step / r.totalSteps : 0;
    lines.push(`  ${shortId(r.experimentId).padEnd(9)} ${bar(frac)} step ${r.step}/${r.totalSteps}${r.loss !== undefined ? `  loss ${r.loss.toFixed(3)}` : ''}`);
  }
  if (st.awaitingApproval.length) lines.push(`  awaiting approval: ${st.awaitingApproval.map(shortId).join(', ')}  (flywheel approve CAMPAIGN ID)`);
  const board = s.leaderboard.filter((e) => e.score !== undefined).slice(0, top);
  if (board.length) {
    lines.push(`  leaderboard (public ${metric}):`);
    board.forEach((e, i) => lines.push(`   ${String(i + 1).padStart(2)}. ${shortId(e.experimentId).padEnd(6)} ${e.score!.toFixed(4)}  ${formatParams(e.params)}`));
  }
  return lines.join('\n');
}
