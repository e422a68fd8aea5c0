// The figures of a set of fault runs: runs, faults by kind, violations, and the longest time to resume per kind.
import type { FaultRunReport } from './fault-run';

export function faultFigures(reports: FaultRunReport[]): string[] {
  const byKind = new Map<string, { injected: number; skipped: number; longestMs: number }>();
  for (const f of reports.flatMap((r) => r.faults)) {
    const k = byKind.get(f.kind) ?? { injected: 0, skipped: 0, longestMs: 0 };
    if (f.skipped) k.skipped++;
    else k.injected++;
    k.longestMs = Math.max(k.longestMs, f.resumeMs ?? 0);
    byKind.set(f.kind, k);
  }
  const violations = reports.reduce((n, r) => n + r.violations.length, 0);
  return [
    `runs: ${reports.length} (seeds ${reports.map((r) => r.seed).join(', ')})`,
    ...[...byKind].map(([kind, k]) => `  ${kind.padEnd(9)} injected ${k.injected}, skipped ${k.skipped} (nothing to hit), longest time to resume ${(k.longestMs / 1000).toFixed(1)} s`),
    `invariant violations: ${violations}`,
    ...reports.flatMap((r) => r.violations.map((v) => `  seed ${r.seed}: ${v}`)),
  ];
}
