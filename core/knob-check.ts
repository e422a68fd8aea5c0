// Knob names a spec gives its trainer (trainer.fixed, searchSpace) against the knobs
// the trainer declares: the built-in trainer's are known here (core/trainer-defaults.ts); another trainer's come from
// its `describe` entry point (core/job-contract.ts), asked by `flywheel validate`. A typo (`hiden`) is refused before
// a loop starts, instead of failing every experiment with the reason in a run folder's stderr.log.

/**
 * Where each knob name of the spec sits. Not `outerLoop.warmStart.pinnedKnobs`: its default is the built-in model's
 * shape whatever the trainer, and a pinned knob a base experiment lacks is simply not pinned.
 */
export function spelledKnobs(spec: { trainer: { fixed: Record<string, unknown> }; searchSpace: Record<string, unknown> }): Array<{
  path: string;
  name: string;
}> {
  return [
    ...Object.keys(spec.trainer.fixed).map((name) => ({ path: `trainer.fixed.${name}`, name })),
    ...Object.keys(spec.searchSpace).map((name) => ({ path: `searchSpace.${name}`, name })),
  ];
}

/** Edit distance of two short names, a swap of neighbours counting one (optimal string alignment), for "did you mean". */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  const d = Array.from({ length: x.length + 1 }, (_, i) => Array.from({ length: y.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= x.length; i++)
    for (let j = 1; j <= y.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[x.length][y.length];
}

/** The declared knob nearest `name` when it is near enough to be a typo of it. */
export function nearestKnob(name: string, declared: readonly string[]): string | undefined {
  let best: { knob: string; d: number } | undefined;
  for (const knob of declared) {
    const d = distance(name, knob);
    if (!best || d < best.d) best = { knob, d };
  }
  return best && best.d <= Math.max(1, Math.floor(best.knob.length / 3)) ? best.knob : undefined;
}

/** One problem per knob name the trainer does not declare: `path: not a knob of TRAINER (did you mean …; its knobs: …)`. */
export function undeclaredKnobProblems(
  spelled: Array<{ path: string; name: string }>,
  declared: readonly string[],
  trainer: string,
): string[] {
  return spelled
    .filter(({ name }) => !declared.includes(name))
    .map(({ path, name }) => {
      const near = nearestKnob(name, declared);
      return `${path}: "${name}" is not a knob of ${trainer} (${near ? `did you mean "${near}"? ` : ''}its knobs: ${declared.join(', ')})`;
    });
}
