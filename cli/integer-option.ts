// The one parser for the CLI's integer flags (commander's argParser, or a value read later such as a port): a bad
// value is a UsageError (exit 2, one line) that names the flag, the range and what was given.
import { UsageError } from './errors';

/** Parses `--flag N` as a safe integer from `min` to `max` (inclusive); anything else throws UsageError. */
export function integerOption(flag: string, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max)
      throw new UsageError(`${flag} must be ${range(min, max)}, got "${value}"`);
    return n;
  };
}

function range(min: number, max: number): string {
  if (max < Number.MAX_SAFE_INTEGER) return `an integer from ${min} to ${max}`;
  return min > Number.MIN_SAFE_INTEGER ? `an integer >= ${min}` : 'an integer';
}
