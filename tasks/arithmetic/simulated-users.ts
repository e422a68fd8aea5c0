// Simulated users of the arithmetic task: people who ask the production model sums and know arithmetic, so they
// judge every answer exactly. Each cares about one category and asks mostly problems of it; most care about sums
// that carry, the ones a small model gets wrong, so their failures (and the outer loop's critiques of them)
// concentrate on the weak category. They ask only problems outside the suite (the same seed's split), so an edit
// they send never teaches an eval item's answer.
import { Rng } from '../../core/stream-rng';
import { firstNumber } from '../../core/graders/numeric-tolerance';
import type { FeedbackEvent } from '../../core/feedback';
import { ANSWER_WIDTH, CATEGORIES, answerOf, categoryOf, completionOf, promptOf, type Category, type Problem } from './problems';
import { splitProblems } from './split';

/**
 * - `editor`: accepts a right answer, otherwise fixes it (an `edit` whose correction is the right completion).
 * - `rejecter`: accepts a right answer, otherwise rejects it saying what the sum is.
 * - `rater`: 5 stars for a right answer, otherwise 1 plus the answer digits it got right in place.
 */
export const ARITHMETIC_PROFILES = ['editor', 'rejecter', 'rater'] as const;
export type ArithmeticProfile = (typeof ARITHMETIC_PROFILES)[number];

export interface ArithmeticUser {
  id: string;
  profile: ArithmeticProfile;
  /** The category this user mostly asks. */
  cares: Category;
}

/** Share of users who care about sums that carry. */
export const CARRY_CARERS = 0.75;
/** Share of a user's questions from the category they care about. */
export const FOCUS = 0.8;
/** Bytes asked per answer: three digits and the newline. */
export const ASK_BYTES = ANSWER_WIDTH + 1;
const PROFILE_MIX: Record<ArithmeticProfile, number> = { editor: 2, rejecter: 1, rater: 1 };

export function arithmeticPopulation(size: number, seed: number): ArithmeticUser[] {
  const rng = Rng.derive(seed, 'arithmetic-users');
  const total = ARITHMETIC_PROFILES.reduce((a, p) => a + PROFILE_MIX[p], 0);
  return Array.from({ length: size }, (_, i) => {
    let x = rng.next() * total;
    let k = 0;
    while (k < ARITHMETIC_PROFILES.length - 1 && x >= PROFILE_MIX[ARITHMETIC_PROFILES[k]]) x -= PROFILE_MIX[ARITHMETIC_PROFILES[k++]];
    return { id: `u${i}`, profile: ARITHMETIC_PROFILES[k], cares: rng.next() < CARRY_CARERS ? 'carry' : 'no-carry' };
  });
}

interface Reply {
  id: string;
  campaignId: string;
  modelVersion: string;
  completion: string;
}

/** Answer digits right in place (the answer read as the first number, fixed-width). */
function digitsRight(p: Problem, got: number | undefined): number {
  if (got === undefined || !Number.isInteger(got) || got < 0) return 0;
  const [want, have] = [answerOf(p), String(got).padStart(ANSWER_WIDTH, '0')];
  return [...want].filter((d, i) => have[have.length - ANSWER_WIDTH + i] === d).length;
}

/** The feedback event `user` sends about the model's answer to `p`. */
export function judgeSum(user: ArithmeticUser, p: Problem, r: Reply): FeedbackEvent {
  const base = { id: r.id, campaignId: r.campaignId, modelVersion: r.modelVersion, prompt: promptOf(p), output: r.completion };
  const got = firstNumber(r.completion);
  const right = got === p.a + p.b;
  if (user.profile === 'rater') return { ...base, kind: 'rating', rating: right ? 5 : 1 + digitsRight(p, got) };
  if (right) return { ...base, kind: 'accept' };
  if (user.profile === 'editor') return { ...base, kind: 'edit', correction: completionOf(p) };
  return { ...base, kind: 'reject', comment: `${p.a}+${p.b} is ${p.a + p.b}, not ${got ?? 'nothing'}` };
}

/** The arithmetic task's users; `taskSeed` is the seed the task's files were generated with. */
export function arithmeticUsers(taskSeed: number) {
  const pool = splitProblems(taskSeed).userPool;
  const byCategory = new Map(CATEGORIES.map((c) => [c, pool.filter((p) => categoryOf(p) === c)]));
  return {
    round(o: { round: number; events: number; seed: number; users: number }) {
      const population = arithmeticPopulation(o.users, o.seed);
      const rng = Rng.derive(o.seed, `arithmetic-users:r${o.round}`);
      const asks = Array.from({ length: o.events }, () => {
        const user = population[rng.int(population.length)];
        const category = rng.next() < FOCUS ? user.cares : CATEGORIES.find((c) => c !== user.cares)!;
        const problems = byCategory.get(category)!;
        const p = problems[rng.int(problems.length)];
        return { prompt: promptOf(p), maxBytes: ASK_BYTES, judge: (r: Reply) => judgeSum(user, p, r) };
      });
      return Promise.resolve(asks);
    },
  };
}
