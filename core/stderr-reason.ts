// The one line of a failed trainer's stderr that says why: the last line that is not a stack frame, a blank, a
// runtime's banner or retry noise. `the trainer exited with code 1` then reads `…: charlm: run.json: params.hiden is
// not a charlm knob (…)` in the experiment's row, `run`, `status`, the dashboard and the Temporal UI's failure.

const NOISE = [
  /^\s/, // stack frames (`    at …`, `  File "…"`), source context and continuation lines
  /^Traceback \(most recent call last\):/,
  /^During handling of the above exception/,
  /^The above exception was the direct cause/,
  /^Node\.js v\d/,
  /^\^+$/,
  /^\[?(warn|warning|info|debug)\b/i,
  /Warning: /, // Python's `…: UserWarning: …` lines from warnings.warn
  /^(npm|node): warn/i,
];

/** The last meaningful line of `stderrTail`, at most `max` characters; undefined when it has none. */
export function stderrReason(stderrTail: string | undefined, max = 300): string | undefined {
  if (!stderrTail) return undefined;
  const lines = stderrTail.split('\n').map((l) => l.replace(/\s+$/, ''));
  const line = lines.filter((l) => l.length > 0 && !NOISE.some((n) => n.test(l))).at(-1);
  if (!line) return undefined;
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
