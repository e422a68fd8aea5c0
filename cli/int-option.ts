// Commander argument parsers for counts, so `--iterations two` is a usage error (exit 2) instead of NaN.
import { InvalidArgumentError } from 'commander';

/** A whole number of at least 1. */
export function positiveInt(text: string): number {
  if (!/^[1-9][0-9]{0,5}$/.test(text)) throw new InvalidArgumentError('expected a whole number of at least 1');
  return Number(text);
}
