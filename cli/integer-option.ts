// The parser commander calls for an integer flag: a bad value is a UsageError (exit 2) that names the flag.
import { UsageError } from './errors';

/** Parses `--flag N` as an integer from `min` to `max` (inclusive); anything else throws UsageError. */
export function integerOption(flag: string, min: number, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^-?\d+$/.test(value) || n < min || n > max) {
      throw new UsageError(
        `${flag} must be an integer ${max < Number.MAX_SAFE_INTEGER ? `from ${min} to ${max}` : `>= ${min}`}, got "${value}"`,
      );
    }
    return n;
  };
}
