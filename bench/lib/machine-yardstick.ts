// A fixed piece of CPU work, timed, printed beside a bench's absolute figures (ms of CPU per experiment): sessions run
// on hosts of different speeds, and a CPU target in ms means something only beside the machine's speed. Ratios taken
// within one run need none. The work is sha256 over 400 MiB in one thread (node's crypto; hardware SHA where the CPU
// has it), so it tracks the clock and the host's contention, not the whole mix of a Flywheel experiment.
import crypto from 'node:crypto';

/** CPU milliseconds the fixed work took in this process now. */
export function yardstickMs(): number {
  const block = Buffer.alloc(1 << 20, 7);
  const t0 = process.cpuUsage();
  for (let i = 0; i < 400; i++) crypto.createHash('sha256').update(block).digest();
  const used = process.cpuUsage(t0);
  return Math.round((used.user + used.system) / 1000);
}

/** The line a bench prints at its start and end. */
export function yardstickLine(when: string): string {
  return `machine yardstick (${when}): sha256 of 400 MiB took ${yardstickMs()} ms of CPU (2026-12-07 afternoon's machine: 289-330)`;
}
