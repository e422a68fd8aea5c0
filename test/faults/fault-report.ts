// The figures of a set of fault runs: runs, faults by kind, violations, and the longest time to resume per kind.
import type { FaultRunReport } from './fault-run';
import { FAULT_KINDS } from './fault-schedule';
import { describeHit } from './prune-window';

const KIND_WIDTH = Math.max(...FAULT_KINDS.map((k) => k.length));

export function faultFigures(reports: FaultRunReport[]): string[] {
  const byKind = new Map<string, { injected: number; skipped: number; longestMs: number; landed: number; reattached: number }>();
  for (const f of reports.flatMap((r) => r.faults)) {
    const k = byKind.get(f.kind) ?? { injected: 0, skipped: 0, longestMs: 0, landed: 0, reattached: 0 };
    if (f.skipped) k.skipped++;
    else k.injected++;
    k.longestMs = Math.max(k.longestMs, f.resumeMs ?? 0);
    if (f.prune?.landed) k.landed++;
    if (f.prune?.landed && (f.prune.awaitAttempts ?? 0) > 1) k.reattached++;
    byKind.set(f.kind, k);
  }
  const violations = reports.reduce((n, r) => n + r.violations.length, 0);
  return [
    `runs: ${reports.length} (seeds ${reports.map((r) => r.seed).join(', ')})`,
    ...reports.map((r) => `  seed ${r.seed}: ${finalState(r)}`),
    ...[...byKind].map(([kind, k]) => {
      // A Temporal kill aimed at a prune counts as one only when it landed inside the window; the others are said.
      const aim = kind === 'temporal-prune' ? `; ${k.landed} of ${k.injected} in the prune window (${k.reattached} reattached there)` : '';
      return `  ${kind.padEnd(KIND_WIDTH)} injected ${k.injected}, skipped ${k.skipped} (nothing to hit), longest time to resume ${(k.longestMs / 1000).toFixed(1)} s${aim}`;
    }),
    ...reports.flatMap((r) =>
      r.faults
        .filter((f) => f.prune)
        .map(
          (f) =>
            `    seed ${r.seed}, ${f.kind} at ${(f.atMs / 1000).toFixed(1)} s: ${describeHit(f.prune!)}; awaitTraining ran ${f.prune!.awaitAttempts ?? '?'} attempt(s); resumed after ${((f.resumeMs ?? 0) / 1000).toFixed(1)} s`,
        ),
    ),
    `invariant violations: ${violations}`,
    ...reports.flatMap((r) => r.violations.map((v) => `  seed ${r.seed}: ${v}`)),
  ];
}

/** The final state in one line: experiments by status, outer iterations, the promoted model, rows compared. */
function finalState(r: FaultRunReport): string {
  const f = r.facts;
  const byStatus = new Map<string, number>();
  for (const e of f.experiments) byStatus.set(e.status, (byStatus.get(e.status) ?? 0) + 1);
  const retried = f.experiments.filter((e) => e.attempts > 1).length;
  const outer = f.outer
    ? `; outer ${f.outer.iterations.map((i) => `i${i.iteration} ${i.status}`).join(', ')}; promoted ${f.outer.promoted ?? 'none'}`
    : '';
  return `${f.experiments.length} experiments (${[...byStatus].map(([s, n]) => `${n} ${s}`).join(', ')}; ${retried} retried)${outer}; rows ${Object.entries(
    f.counts,
  )
    .map(([t, n]) => `${t} ${n}`)
    .join(', ')}`;
}
