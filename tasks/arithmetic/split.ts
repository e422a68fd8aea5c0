// Deals the task's problems into disjoint sets from one seed: public and held-out eval problems (balanced by
// category), a perturbed twin for each public problem, the training problems, the sealed test problems (dealt last,
// from what the others left), and the pool simulated users ask from (every problem outside the suite). Pure and
// deterministic.
import { Rng } from '../../core/stream-rng';
import { CATEGORIES, allProblems, answerOf, categoryOf, keyOf, type Category, type Problem } from './problems';

export interface SplitSizes {
  /** Training problems (train.jsonl lines). @default 3000 */
  train?: number;
  /** Public eval problems per category. @default 100 */
  publicPerCategory?: number;
  /** Held-out eval problems per category (enough that the gate can tell a gain of a few points from noise). @default 150 */
  heldoutPerCategory?: number;
  /**
   * Sealed test problems per category (at most: fewer where training leaves fewer): scored only for reports, so fewer
   * than held-out. Dealt after training, from the end of the seeded order, so the other sets are what they were
   * without them. @default 50
   */
  testPerCategory?: number;
  /**
   * Share of the training problems that carry, when set: a first dataset that lacks what users ask most (the outer
   * loop's ablation, bench/outer-ablation.ts). The eval problems and the users' pool do not change. @default unset
   * (training problems drawn as they come: about 64 % carry)
   */
  trainCarryShare?: number;
}

export interface ArithmeticSplit {
  train: Problem[];
  public: Problem[];
  heldout: Problem[];
  /** The sealed test split's problems: in no other set, and never asked by simulated users. */
  test: Problem[];
  /** twins[k] is the perturbed twin of public[k]: same category, other digits, another answer. */
  twins: Problem[];
  /** Problems outside the suite (the training ones among them), for simulated users. */
  userPool: Problem[];
}

export const DEFAULT_SPLIT_SIZES: Required<Omit<SplitSizes, 'trainCarryShare'>> = {
  train: 3000,
  publicPerCategory: 100,
  heldoutPerCategory: 150,
  testPerCategory: 50,
};

/** Every problem in a seeded order (Fisher-Yates over the fixed order of allProblems). */
function shuffled(seed: number): Problem[] {
  const xs = allProblems();
  const rng = Rng.derive(seed, 'arithmetic-split');
  for (let i = xs.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [xs[i], xs[j]] = [xs[j], xs[i]];
  }
  return xs;
}

export function splitProblems(seed: number, sizes: SplitSizes = {}): ArithmeticSplit {
  const s = { ...DEFAULT_SPLIT_SIZES, ...sizes };
  const order = shuffled(seed);
  const used = new Set<string>();
  const take = (category: Category, n: number, ok: (p: Problem) => boolean = () => true): Problem[] => {
    const out: Problem[] = [];
    for (const p of order) {
      if (out.length === n) break;
      if (used.has(keyOf(p)) || categoryOf(p) !== category || !ok(p)) continue;
      used.add(keyOf(p));
      out.push(p);
    }
    if (out.length < n) throw new RangeError(`splitProblems: only ${out.length} ${category} problems left, ${n} asked`);
    return out;
  };
  const pub = CATEGORIES.flatMap((c) => take(c, s.publicPerCategory));
  const heldout = CATEGORIES.flatMap((c) => take(c, s.heldoutPerCategory));
  const twins = pub.map((p) => take(categoryOf(p), 1, (t) => t.a !== p.a && t.b !== p.b && answerOf(t) !== answerOf(p))[0]);
  const rest = order.filter((p) => !used.has(keyOf(p)));
  if (rest.length < s.train) throw new RangeError(`splitProblems: ${rest.length} problems left for training, ${s.train} asked`);
  const train = trainingProblems(rest, s.train, sizes.trainCarryShare);
  const test = testProblems(rest, new Set(train.map(keyOf)), s.testPerCategory);
  const sealed = new Set(test.map(keyOf));
  return { train, public: pub, heldout, test, twins, userPool: rest.filter((p) => !sealed.has(keyOf(p))) };
}

/**
 * The last `perCategory` problems of each category in `rest` that training did not take (in the seeded order); fewer
 * where training took nearly all of a category (a low `trainCarryShare` leaves few no-carry problems).
 */
function testProblems(rest: Problem[], trained: Set<string>, perCategory: number): Problem[] {
  return CATEGORIES.flatMap((c) => {
    const left = rest.filter((p) => categoryOf(p) === c && !trained.has(keyOf(p)));
    return perCategory > 0 ? left.slice(-perCategory) : [];
  });
}

/** The first `n` of `rest`, or, with `carryShare`, the first round(n × share) that carry and the first of the rest that do not. */
function trainingProblems(rest: Problem[], n: number, carryShare: number | undefined): Problem[] {
  if (carryShare === undefined) return rest.slice(0, n);
  if (!(carryShare >= 0 && carryShare <= 1)) throw new RangeError(`splitProblems: trainCarryShare must be in [0, 1], not ${carryShare}`);
  const carrying = Math.round(n * carryShare);
  const want: Record<Category, number> = { carry: carrying, 'no-carry': n - carrying };
  const out = rest.filter((p) => want[categoryOf(p)]-- > 0);
  if (out.length < n) throw new RangeError(`splitProblems: ${out.length} problems at a carry share of ${carryShare}, ${n} asked`);
  return out;
}
