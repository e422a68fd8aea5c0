// The machine's 1, 5 and 15 minute load averages as one string ("1.20 0.85 0.40"), printed beside every bench figure.
import os from 'node:os';

export function loadAverage(): string {
  return os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
}
