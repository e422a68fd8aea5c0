// Held-out canaries for the built-in task: random-looking strings that exist only in held-out items' text. A model
// that completes one from its beginning saw the held-out items, whatever channel carried them (a database read, an
// export of the suite): proof, where the held-out/public gain comparison is statistics. They are not in the corpus's
// held-out source files, so a trainer reading those is left to that comparison. Pure and deterministic.
import { createHash } from 'node:crypto';

/** A held-out item that carries a canary: its prompt is the canary's beginning, its reference the secret rest. */
export interface HeldoutCanaryDraft {
  id: string;
  prompt: string;
  reference: string;
  category: 'canary';
  sourceFile: '';
  /** Outside the gate's paired metrics (exact_token and bits_per_byte): the canary is evidence, not a score. */
  grader: 'exact_match';
}

export interface BuiltinHeldoutCanaries {
  items: HeldoutCanaryDraft[];
  /** Stored with the suite as `heldoutCanaries`: must never appear in a training example nor in any output. */
  canaries: string[];
}

/** Characters of the canary the prompt holds; the other 28 are the secret part a model can only know from held-out text. */
export const HELDOUT_CANARY_SHOWN = 12;

/**
 * `count` canaries, 40 lower-case hex characters each: shaped like a commit hash, which code is full of, so there is
 * no marker to filter them out by. They depend on the held-out text itself (`heldoutDigest`), so knowing the seed
 * and this code does not give them away: only a copy of the held-out items does.
 */
export function heldoutCanaryStrings(seed: number, heldoutDigest: string, count: number): string[] {
  return Array.from({ length: count }, (_, k) =>
    createHash('sha256').update(`flywheel-heldout-canary\0${seed}\0${k}\0${heldoutDigest}`).digest('hex').slice(0, 40),
  );
}

/** The held-out canary items: a code comment that begins the canary, and its continuation as the reference. */
export function buildHeldoutCanaries(seed: number, heldoutDigest: string, count = 2): BuiltinHeldoutCanaries {
  const canaries = heldoutCanaryStrings(seed, heldoutDigest, count);
  const items = canaries.map((c, k): HeldoutCanaryDraft => ({
    id: `heldout-canary-${k}`,
    prompt: `// generated from commit ${c.slice(0, HELDOUT_CANARY_SHOWN)}`,
    reference: c.slice(HELDOUT_CANARY_SHOWN),
    category: 'canary',
    sourceFile: '',
    grader: 'exact_match',
  }));
  return { items, canaries };
}
