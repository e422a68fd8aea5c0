// Mix weights that hold each named source's share of the training draws (spec outerLoop.sourceShares), whatever how
// many examples each source has: two ablation arms then differ only in where their feedback targets come from.
import { mixForShares } from '../../core/dataset/source-shares';

/** Each source's share of the summed effective weight under `out`, given its weight under `mix`. */
function sharesUnder(mix: Record<string, number>, weightOf: Record<string, number>, out: Record<string, number>): Record<string, number> {
  const w = Object.fromEntries(Object.entries(weightOf).map(([s, x]) => [s, (x * out[s]) / mix[s]]));
  const total = Object.values(w).reduce((a, b) => a + b, 0);
  return Object.fromEntries(Object.entries(w).map(([s, x]) => [s, x / total]));
}

const MIX = { user: 1, critique: 8, revision: 8, critic: 1 };

test("two arms with different feedback sources draw the base at the same share; the rest splits by the arm's own mix", () => {
  const reference = { user: 1800, critique: 600 };
  const critique = { user: 1800, critique: 480, revision: 40, critic: 1280 };
  for (const weightOf of [reference, critique]) {
    const out = mixForShares(MIX, weightOf, { user: 0.75 });
    const got = sharesUnder(MIX, weightOf, out);
    expect(got.user).toBeCloseTo(0.75, 5);
    // The sources not named keep their proportions to each other.
    const others = Object.keys(weightOf).filter((s) => s !== 'user');
    const rest = others.reduce((a, s) => a + weightOf[s as keyof typeof weightOf], 0);
    for (const s of others) expect(got[s]).toBeCloseTo((0.25 * weightOf[s as keyof typeof weightOf]) / rest, 5);
  }
  // Before: the mix alone gave the base 0.75 of the reference arm's draws but 0.50 of the critique arm's.
  expect(sharesUnder(MIX, reference, MIX).user).toBeCloseTo(0.75, 5);
  expect(sharesUnder(MIX, critique, MIX).user).toBeCloseTo(0.5, 5);
});

test('the total weight keeps its scale; several named shares are each met', () => {
  const weightOf = { user: 1000, critique: 200, critic: 800 };
  const out = mixForShares(MIX, weightOf, { user: 0.6, critic: 0.1 });
  const got = sharesUnder(MIX, weightOf, out);
  expect([got.user, got.critic, got.critique].map((x) => Number(x.toFixed(5)))).toEqual([0.6, 0.1, 0.3]);
  const total = Object.entries(weightOf).reduce((a, [s, x]) => a + (x * out[s]) / MIX[s as keyof typeof MIX], 0);
  expect(total).toBeCloseTo(2000, 2);
});

test('with nothing else to draw the named shares are relative; an absent or weightless source changes nothing', () => {
  expect(mixForShares(MIX, { user: 1800 }, { user: 0.75 })).toEqual(MIX);
  const out = mixForShares(MIX, { user: 900, critique: 300 }, { user: 0.25, critique: 0.25 });
  expect(sharesUnder(MIX, { user: 900, critique: 300 }, out).user).toBeCloseTo(0.5, 5);
  expect(mixForShares(MIX, { user: 1800, critique: 0 }, { critique: 0.5 })).toEqual(MIX);
  expect(mixForShares(MIX, { user: 1800, critique: 600 }, {})).toEqual(MIX);
});
