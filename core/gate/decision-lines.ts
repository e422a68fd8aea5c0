// A gate decision's reason as people read it: a short verdict, then one line per check, instead of the one line of
// ~1,500 characters the record holds (core/gate/checks.ts joins every check's `rule: reason` with "; "). Pure; the
// CLI (status, outer, demo) and the report print it.

export interface DecisionLines {
  /** `promoted ckpt-b over ckpt-a (9 checks)`, `rejected by heldoutImprovement`, or the reason itself when it is short. */
  verdict: string;
  /** `rule: reason` (a promotion's every check) or the deciding check's clauses; empty when the reason is one clause. */
  checks: string[];
}

/** `; ` before a check's rule (a camelCase name and a colon): where one check's reason ends and the next begins. */
const CHECK_BOUNDARY = /; (?=[a-z]+[A-Z][A-Za-z]*: )/;

/** The verdict and the checks of a recorded reason (any reason: a claim's, a researcher's, the gate's). */
export function decisionLines(reason: string): DecisionLines {
  const promoted = /^(promoted [^:]*?): (.*)$/s.exec(reason);
  if (promoted) {
    const checks = promoted[2].split(CHECK_BOUNDARY);
    return { verdict: `${promoted[1]} (${checks.length} check${checks.length === 1 ? '' : 's'} passed)`, checks };
  }
  // `rejected by RULE: …` / `held by RULE: …`: the deciding check, its clauses one a line.
  const refused = /^((?:rejected|held) by [A-Za-z]+): (.*)$/s.exec(reason);
  if (refused) return { verdict: refused[1], checks: refused[2].split('; ') };
  return { verdict: reason, checks: [] };
}

/** The verdict on its own line after `label`, each check on a line of its own, indented under it. */
export function decisionText(reason: string, indent = '  ', label = 'gate: '): string[] {
  const { verdict, checks } = decisionLines(reason);
  return [`${indent}${label}${verdict}`, ...checks.map((c) => `${indent}  ${c}`)];
}
