// Why a loop ended with no experiment succeeded, in one line: how many failed, were pruned or timed out, and the
// reason most of the failures share (the trainer's own last stderr line, core/stderr-reason.ts). `run` and `status`
// end with it and exit 1, instead of exit 0 above a summary with nothing in it.
import { BASELINE_PROPOSER } from '../contracts/experiment';

interface Ended {
  proposer: string;
  status: string;
  error: string | null;
}

export function noSuccessReason(loopId: string, experiments: readonly Ended[]): string {
  const searched = experiments.filter((e) => e.proposer !== BASELINE_PROPOSER);
  const byStatus = new Map<string, number>();
  for (const e of searched) byStatus.set(e.status, (byStatus.get(e.status) ?? 0) + 1);
  const counts = [...byStatus].map(([status, n]) => `${n} ${status}`).join(', ');
  const reasons = new Map<string, number>();
  for (const e of searched) if (e.error) reasons.set(e.error, (reasons.get(e.error) ?? 0) + 1);
  const [common] = [...reasons].sort((a, b) => b[1] - a[1]);
  const why = common ? `; ${common[1] === searched.length ? 'every one' : `${common[1]} of them`}: ${common[0]}` : '';
  return `no experiment of ${loopId} succeeded (${counts || 'none ran'})${why}`;
}
