// A seeded population of simulated users for the demo's outer loop: each asks the production model to continue
// a line of code and judges the answer against what the line really says, the way one kind of real user would.
// Their preference (the true continuation, token for token) is one the current model does not yet meet.
import { tokenize } from '../../core/graders/code-tokens';
import { Rng } from '../../core/stream-rng';
import type { FeedbackEvent } from '../../core/feedback';

/**
 * - `editor`: accepts a good answer, otherwise fixes it: an `edit` whose correction is the true continuation (the
 *   teacher derives an SFT example from it).
 * - `rejecter`: accepts a good answer, otherwise rejects it with a comment naming the first wrong token.
 * - `rater`: always rates, 1 to 5 stars by the share of the reference's tokens the answer got right from the start.
 */
export const USER_PROFILES = ['editor', 'rejecter', 'rater'] as const;
export type UserProfile = (typeof USER_PROFILES)[number];

export interface SimulatedUser {
  /** `u<index>` within the population. */
  id: string;
  profile: UserProfile;
  /** Leading tokens of the reference an answer must get right for this user to accept it (all, if fewer). */
  strictness: number;
}

export interface PopulationOptions {
  size: number;
  seed: number;
  /** Relative share of each profile. @default { editor: 2, rejecter: 1, rater: 1 } */
  mix?: Partial<Record<UserProfile, number>>;
  /** Strictness is drawn uniformly from 1 to this. @default 4 */
  maxStrictness?: number;
}

/** One exchange a user judges: the event's key fields, the prompt, the model's answer and the true continuation. */
export interface Turn {
  id: string;
  campaignId: string;
  modelVersion: string;
  prompt: string;
  completion: string;
  reference: string;
}

function withDefaults(o: PopulationOptions): Required<PopulationOptions> {
  return { mix: { editor: 2, rejecter: 1, rater: 1 }, maxStrictness: 4, ...o };
}

/** `size` users, a pure function of the options. */
export function simulatedPopulation(options: PopulationOptions): SimulatedUser[] {
  const o = withDefaults(options);
  const weights = USER_PROFILES.map((p) => Math.max(0, o.mix[p] ?? 0));
  const total = weights.reduce((a, b) => a + b, 0);
  if (!(total > 0)) throw new RangeError('simulatedPopulation: mix needs a positive weight');
  const rng = Rng.derive(o.seed, 'simulated-users');
  return Array.from({ length: o.size }, (_, i) => {
    let x = rng.next() * total;
    let k = 0;
    while (k < weights.length - 1 && x >= weights[k]) x -= weights[k++];
    return { id: `u${i}`, profile: USER_PROFILES[k], strictness: 1 + rng.int(o.maxStrictness) };
  });
}

/** How many of the reference's tokens the completion reproduces from the start, of how many. */
export function leadingMatch(
  completion: string,
  reference: string,
): { matched: number; total: number; firstMiss?: { expected: string; got: string } } {
  const text = (s: string) => tokenize(s).map((t) => s.slice(t.start, t.end));
  const ref = text(reference);
  const out = text(completion);
  let matched = 0;
  while (matched < ref.length && ref[matched] === out[matched]) matched++;
  const firstMiss = matched < ref.length ? { expected: ref[matched], got: out[matched] ?? '' } : undefined;
  return { matched, total: ref.length, firstMiss };
}

/** The feedback event `user` sends about `turn`. Deterministic: no randomness at judging time. */
export function judge(user: SimulatedUser, turn: Turn): FeedbackEvent {
  const base = { id: turn.id, campaignId: turn.campaignId, modelVersion: turn.modelVersion, prompt: turn.prompt, output: turn.completion };
  const m = leadingMatch(turn.completion, turn.reference);
  if (user.profile === 'rater') return { ...base, kind: 'rating', rating: 1 + Math.round((4 * m.matched) / Math.max(1, m.total)) };
  if (m.matched >= Math.min(user.strictness, m.total)) return { ...base, kind: 'accept' };
  if (user.profile === 'editor') return { ...base, kind: 'edit', correction: turn.reference };
  const miss = m.firstMiss!;
  return {
    ...base,
    kind: 'reject',
    comment: `wrong at token ${m.matched + 1}: expected ${JSON.stringify(miss.expected)}, got ${miss.got ? JSON.stringify(miss.got) : 'nothing'}`,
  };
}
