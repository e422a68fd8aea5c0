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

export function formatSeconds(t: number): string {
  const s = Math.round(t);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

const shortId = (id: string) => id.slice(id.lastIndexOf('/') + 1);

export function renderSnapshot(s: LoopSnapshot, metric: string, top = 5): string {
  const lines: string[] = [];
  const st = s.status;
  const c = s.counts;
  const outcomes = Object.entries(c.byStatus)
    .map(([k, n]) => `${n} ${k.replace('_', ' ')}`)
    .join(', ');
  lines.push(
    `phase ${st.phase}  experiments: ${c.done} done${outcomes ? ` (${outcomes})` : ''}, ${c.running} running, ${c.queued} queued of ${c.budget}  parallel ${st.parallelism}  ` +
      `best ${st.best ? `${st.best.score.toFixed(4)} (${shortId(st.best.experimentId)})` : '–'}  ETA ${s.etaSeconds === undefined ? '– (after the first result)' : formatSeconds(s.etaSeconds)}`,
  );
  lines.push(`  all ${bar(c.budget > 0 ? c.done / c.budget : 0)} ${c.done}/${c.budget} results (the untrained baseline not counted)`);
  for (const r of s.running) {
    if (r.step === 0 && r.loss === undefined) {
      lines.push(
        `  ${shortId(r.experimentId).padEnd(9)} starting (no metric yet${r.elapsedSeconds !== undefined ? `, ${formatSeconds(r.elapsedSeconds)}` : ''})`,
      );
      continue;
    }
    const frac = r.totalSteps > 0 ? r.step / r.totalSteps : 0;
    const left = frac > 0 && r.elapsedSeconds !== undefined ? `  ~${formatSeconds((r.elapsedSeconds * (1 - frac)) / frac)} left` : '';
    lines.push(
      `  ${shortId(r.experimentId).padEnd(9)} ${bar(frac)} step ${r.step}/${r.totalSteps || '?'}${r.loss !== undefined ? `  loss ${r.loss.toFixed(3)}` : ''}${left}`,
    );
  }
  if (st.awaitingApproval.length)
    lines.push(`  awaiting approval: ${st.awaitingApproval.map(shortId).join(', ')}  (flywheel approve CAMPAIGN ID)`);
  const board = s.leaderboard.filter((e) => e.score !== undefined).slice(0, top);
  if (board.length) {
    lines.push(`  leaderboard (public ${metric}):`);
    board.forEach((e, i) =>
      lines.push(`   ${String(i + 1).padStart(2)}. ${shortId(e.experimentId).padEnd(6)} ${e.score!.toFixed(4)}  ${formatParams(e.params)}`),
    );
  }
  return lines.join('\n');
}
