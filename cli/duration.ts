// Durations as people type them on the command line (`--every 1d`): one whole number and one unit, nothing else,
// so a typo is a usage error instead of a schedule that fires every millisecond.
import { UsageError } from './errors';

const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000 } as const;

/** The longest interval accepted (a year): anything longer is more likely a typo than a plan. */
export const MAX_DURATION_MS = 365 * UNIT_MS.d;

/** `45s`, `30m`, `6h`, `1d` → milliseconds; throws UsageError naming `what` otherwise. */
export function parseDuration(text: string, what = 'duration'): number {
  const m = /^([1-9][0-9]{0,8})([dhms])$/.exec(text);
  const ms = m ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : NaN;
  if (!(ms > 0 && ms <= MAX_DURATION_MS)) {
    throw new UsageError(`bad ${what} "${text}": expected a whole number and a unit (s, m, h or d), e.g. 45s, 30m, 6h, 1d; at most 365d`);
  }
  return ms;
}

/** Milliseconds in the largest unit that divides them evenly: 86400000 → `1d`, 5400000 → `90m`. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of Object.entries(UNIT_MS)) if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}
