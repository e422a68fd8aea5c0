// A seeded fault schedule: which component fails, and when, replayable from the seed alone.

/**
 * `network`: every PostgreSQL connection reset and new ones refused for a few seconds, through the proxy.
 * `temporal-prune`: Temporal killed the moment a prune is in flight (the verdict stored, the trainer being killed),
 * waiting up to a minute from its moment for one to begin (prune-window.ts).
 */
export const FAULT_KINDS = ['worker', 'trainer', 'temporal', 'postgres', 'network', 'temporal-prune'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface ScheduledFault {
  /** Milliseconds after the campaign starts. */
  atMs: number;
  kind: FaultKind;
}

/** mulberry32: a small, well-mixed 32-bit PRNG; the same seed gives the same sequence everywhere. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` faults of `kinds`, at random moments in [minGapMs, windowMs], at least `minGapMs` apart, sorted by time. */
export function faultSchedule(
  seed: number,
  opts: { count: number; kinds: readonly FaultKind[]; windowMs: number; minGapMs: number },
): ScheduledFault[] {
  const rnd = seededRandom(seed);
  const out: ScheduledFault[] = [];
  let at = 0;
  for (let i = 0; i < opts.count; i++) {
    const room = Math.max(opts.minGapMs, (opts.windowMs - at) / (opts.count - i));
    at += opts.minGapMs + Math.floor(rnd() * (room - opts.minGapMs + 1));
    out.push({ atMs: at, kind: opts.kinds[Math.floor(rnd() * opts.kinds.length)] });
  }
  return out;
}
