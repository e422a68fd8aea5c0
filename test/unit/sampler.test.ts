// The built-in proposer: determinism, legality of every proposal, de-duplication, and evidence that TPE beats
// random search on synthetic objectives (a test that would fail if TPE were random search).
import type { Params, SearchSpace } from '../../core/spec';
import { MIXED_SPACE } from '../helpers/search-spaces';
import { isNearDuplicate, paramsKey, proposeBatch, validateParams, type SamplerKind, type Trial } from '../../core/sampler';
import { createRng, mixSeed } from '../../core/sampler/rng';
import { sampleParam, spaceSize } from '../../core/sampler/space';
import { splitTrials } from '../../core/sampler/tpe';

const mixed = MIXED_SPACE;

/** A shifted quadratic in each knob's own scale (log10 lr, log2 width), plus a per-choice penalty; minimum 0. */
function quadratic(p: Params): number {
  const penalty: Record<string, number> = { relu: 0.3, gelu: 0, tanh: 1, silu: 0.15 };
  const lr = Math.log10(p.lr as number) - Math.log10(3e-3);
  const dropout = ((p.dropout as number) - 0.1) / 0.5;
  const layers = ((p.layers as number) - 3) / 7;
  const width = Math.log2(p.width as number) - Math.log2(256);
  return lr * lr + 4 * dropout * dropout + 2 * layers * layers + 0.25 * width * width + penalty[p.act as string];
}

/** Runs a campaign of `trials` in batches; returns the true value of the best-by-observed configuration. */
function campaign(kind: SamplerKind, seed: number, opts: { trials: number; batch: number; noise: number }): number {
  const history: Trial[] = [];
  const noise = createRng(mixSeed(seed, 77));
  let bestObserved = Infinity;
  let bestTrue = Infinity;
  while (history.length < opts.trials) {
    const count = Math.min(opts.batch, opts.trials - history.length);
    for (const params of proposeBatch({ kind, space: mixed, history, count, seed, startupTrials: 5 })) {
      const truth = quadratic(params);
      const value = truth + opts.noise * noise.normal();
      history.push({ params, value, state: 'finished' });
      if (value < bestObserved) [bestObserved, bestTrue] = [value, truth];
    }
  }
  return bestTrue;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2;
};

/** A history with every state, so TPE's model is active and the liar and pruned paths run. */
function someHistory(space: SearchSpace, seed: number, n: number): Trial[] {
  const rng = createRng(seed);
  const states: Trial['state'][] = ['finished', 'finished', 'finished', 'pruned', 'failed', 'pending'];
  return Array.from({ length: n }, (_, i) => {
    const params = Object.fromEntries(Object.entries(space).map(([k, def]) => [k, sampleParam(def, rng)]));
    const state = states[i % states.length];
    return state === 'finished' ? { params, state, value: rng.normal() } : { params, state };
  });
}

describe('proposeBatch', () => {
  it('is a pure function of its inputs, and never calls Math.random', () => {
    const spy = jest.spyOn(Math, 'random').mockImplementation(() => {
      throw new Error('Math.random called');
    });
    try {
      const history = someHistory(mixed, 3, 24);
      for (const kind of ['tpe', 'random'] as const) {
        const a = proposeBatch({ kind, space: mixed, history, count: 5, seed: 11, startupTrials: 4 });
        const b = proposeBatch({ kind, space: mixed, history: structuredClone(history), count: 5, seed: 11, startupTrials: 4 });
        expect(b).toEqual(a);
        expect(proposeBatch({ kind, space: mixed, history, count: 5, seed: 12, startupTrials: 4 })).not.toEqual(a);
      }
    } finally {
      spy.mockRestore();
    }
  });

  it('draws at random until startupTrials finished trials exist, then uses the model', () => {
    const history = someHistory(mixed, 5, 12); // 6 finished, 2 pruned, 2 failed, 2 pending
    const args = { space: mixed, history, count: 3, seed: 9 };
    expect(proposeBatch({ kind: 'tpe', ...args, startupTrials: 7 })).toEqual(proposeBatch({ kind: 'random', ...args, startupTrials: 7 }));
    expect(proposeBatch({ kind: 'tpe', ...args, startupTrials: 6 })).not.toEqual(
      proposeBatch({ kind: 'random', ...args, startupTrials: 6 }),
    );
  });

  it('proposes only legal configurations, over many seeds and every kind of knob', () => {
    const space: SearchSpace = {
      ...mixed,
      tiny: { type: 'float', low: 1e-9, high: 2e-9, log: true },
      fixed: { type: 'float', low: 0.5, high: 0.5, log: false },
      one: { type: 'int', low: 7, high: 7, log: true },
      neg: { type: 'int', low: -3, high: 2, log: false },
      logInt: { type: 'int', low: 1, high: 3, log: true },
      flag: { type: 'categorical', choices: [true, false, 0, '0'] },
    };
    for (let seed = 0; seed < 30; seed++) {
      const history = someHistory(space, seed, seed % 2 ? 30 : 8);
      for (const [kind, tpe] of [
        ['tpe', {}],
        ['tpe', { multivariate: true }],
        ['random', {}],
      ] as const) {
        for (const params of proposeBatch({ kind, space, history, count: 4, seed, startupTrials: 3, tpe })) {
          expect(validateParams(space, params)).toEqual([]);
        }
      }
    }
  });

  it('honours log scales when sampling uniformly', () => {
    const rng = createRng(1);
    const lr = Array.from({ length: 4000 }, () => sampleParam(mixed.lr, rng) as number);
    // Log-uniform over five decades puts 40% below 1e-3; linear-uniform would put 0.1%.
    const below = lr.filter((x) => x < 1e-3).length / lr.length;
    expect(below).toBeGreaterThan(0.36);
    expect(below).toBeLessThan(0.44);
    const width = Array.from({ length: 4000 }, () => sampleParam(mixed.width, rng) as number);
    expect(width.every(Number.isInteger)).toBe(true);
    expect(median(width)).toBeGreaterThan(100);
    expect(median(width)).toBeLessThan(160); // √(16·1024) = 128
    // The end value owns a full half-step bin: [15.5, 16.5] is 1.5% of the log range.
    expect(width.filter((w) => w === 16).length).toBeGreaterThan(30);
    expect(Math.min(...width) >= 16 && Math.max(...width) <= 1024).toBe(true);
  });

  it('never repeats a finished, failed or pending trial (compared on the searched knobs), nor itself within a batch', () => {
    const small: SearchSpace = {
      n: { type: 'int', low: 1, high: 3, log: false },
      c: { type: 'categorical', choices: ['a', 'b'] },
    };
    expect(spaceSize(small)).toBe(6);
    const history: Trial[] = [
      { params: { n: 1, c: 'a' }, value: 0.1, state: 'finished' },
      { params: { n: 2, c: 'a', steps: 100 }, value: 0.3, state: 'finished' }, // a fixed knob beside the searched ones
      { params: { n: 1, c: 'b' }, state: 'failed' },
      { params: { n: 3, c: 'a' }, state: 'pending' },
    ];
    for (let seed = 0; seed < 20; seed++) {
      for (const kind of ['tpe', 'random'] as const) {
        const batch = proposeBatch({ kind, space: small, history, count: 2, seed, startupTrials: 1 });
        const keys = [...history.map((t) => t.params), ...batch].map((p) => paramsKey({ n: p.n, c: p.c }));
        expect(new Set(keys).size).toBe(6);
      }
    }
    // Past exhaustion it still answers (a repeat) rather than hanging or throwing.
    expect(proposeBatch({ kind: 'tpe', space: small, history, count: 4, seed: 1, startupTrials: 1 })).toHaveLength(4);
  });

  it('keeps a large TPE batch distinct and spread out (the constant liar)', () => {
    const history = someHistory(mixed, 8, 30);
    for (let seed = 0; seed < 10; seed++) {
      const batch = proposeBatch({ kind: 'tpe', space: mixed, history, count: 8, seed, startupTrials: 4 });
      expect(new Set(batch.map(paramsKey)).size).toBe(8);
      expect(batch.every((p, i) => batch.every((q, j) => i === j || !isNearDuplicate(p, q, mixed, 1e-3)))).toBe(true);
    }
  });

  it('still models the other knobs when one is fixed by low = high', () => {
    const space: SearchSpace = { x: { type: 'float', low: 0, high: 1, log: false }, y: { type: 'float', low: 2, high: 2, log: false } };
    const best = (kind: SamplerKind, seed: number, multivariate: boolean) => {
      const history: Trial[] = [];
      while (history.length < 20) {
        const [params] = proposeBatch({ kind, space, history, count: 1, seed, startupTrials: 5, tpe: { multivariate } });
        history.push({ params, value: ((params.x as number) - 0.3) ** 2, state: 'finished' });
      }
      return Math.min(...history.map((t) => t.value as number));
    };
    const seeds = Array.from({ length: 20 }, (_, i) => i + 1);
    const random = median(seeds.map((s) => best('random', s, false)));
    for (const multivariate of [false, true]) {
      expect(median(seeds.map((s) => best('tpe', s, multivariate)))).toBeLessThan(0.2 * random);
    }
  });

  it('rejects a bad count', () => {
    expect(() => proposeBatch({ kind: 'random', space: mixed, history: [], count: -1, seed: 1, startupTrials: 0 })).toThrow(RangeError);
    expect(proposeBatch({ kind: 'tpe', space: mixed, history: [], count: 0, seed: 1, startupTrials: 0 })).toEqual([]);
  });
});

describe('TPE trial split', () => {
  it('puts the best finished trials in the good group and pruned, pending and non-finite ones in the bad; drops failed', () => {
    const t = (value: number | undefined, state: Trial['state'], n: number): Trial => ({ params: { n }, value, state });
    const trials = [
      t(3, 'finished', 0),
      t(undefined, 'pruned', 1),
      t(1, 'finished', 2),
      t(undefined, 'failed', 3),
      t(Infinity, 'finished', 4),
      t(undefined, 'pending', 5),
      t(2, 'finished', 6),
    ];
    const { good, bad } = splitTrials(trials, () => 2);
    expect(good.map((x) => x.params.n)).toEqual([2, 6]);
    expect(bad.map((x) => x.params.n)).toEqual([0, 1, 4, 5]);
    // γ larger than the finished trials with a value: only those can be good.
    expect(splitTrials(trials, () => 10).good.map((x) => x.params.n)).toEqual([0, 2, 6]);
  });
});

describe('validateParams', () => {
  it('names each problem as a knob: message line', () => {
    const params = { lr: 2, dropout: 'high', layers: 2.5, act: 'mish', extra: 1 } as Params;
    expect(validateParams(mixed, params)).toEqual([
      'lr: 2 is outside [0.00001, 1]',
      'dropout: "high" is not a finite number',
      'layers: 2.5 is not an integer',
      'width: missing',
      'act: "mish" is not one of "relu", "gelu", "tanh", "silu"',
      'extra: not in the search space',
    ]);
    expect(validateParams(mixed, { lr: 0.01, dropout: 0, layers: 8, width: 16, act: 'gelu' })).toEqual([]);
    expect(validateParams({ f: { type: 'categorical', choices: [1, true] } }, { f: '1' })).toEqual(['f: "1" is not one of 1, true']);
  });
});

describe('paramsKey and isNearDuplicate', () => {
  it('keys ignore key order but not value types', () => {
    expect(paramsKey({ a: 1, b: 'x' })).toBe(paramsKey({ b: 'x', a: 1 }));
    expect(paramsKey({ a: 1 })).not.toBe(paramsKey({ a: '1' }));
  });

  it('measures distance in the unit cube on each knob’s own scale', () => {
    const space: SearchSpace = { lr: mixed.lr, act: mixed.act };
    const a = { lr: 1e-3, act: 'relu' };
    expect(isNearDuplicate(a, { lr: 1.001e-3, act: 'relu' }, space, 1e-3)).toBe(true);
    // One decade of five on the log scale is 0.2 of the range: distance 0.2/√2.
    expect(isNearDuplicate(a, { lr: 1e-2, act: 'relu' }, space, 0.15)).toBe(true);
    expect(isNearDuplicate(a, { lr: 1e-2, act: 'relu' }, space, 0.14)).toBe(false);
    // A differing categorical alone is distance 1/√2.
    expect(isNearDuplicate(a, { lr: 1e-3, act: 'gelu' }, space, 0.7)).toBe(false);
    expect(isNearDuplicate(a, { lr: 1e-3 }, space, 0.7)).toBe(false);
  });
});

describe('TPE against random search', () => {
  // 60 seeds × 30 trials, start-up 5. A random-search impostor sharing the start-up stream ties every seed (0 wins);
  // one with its own stream won 47% and 57% here, with medians 1.10 and 0.86 of random's. TPE, on seeds 61-260,
  // wins 80% (noise-free) and 69% (noisy) with medians 0.53 and 0.61 of random's: the bounds leave slack for a
  // refactor that reshuffles the random streams, and an impostor fails at least one of them.
  const seeds = Array.from({ length: 60 }, (_, i) => i + 1);

  it.each([
    ['a shifted log-scale quadratic, one trial at a time', { trials: 30, batch: 1, noise: 0 }, 2 / 3, 0.75],
    ['the same with noise σ = 0.2, in batches of 4', { trials: 30, batch: 4, noise: 0.2 }, 0.55, 0.75],
  ])('finds better configurations on %s', (_name, opts, minWinRate, maxMedianRatio) => {
    const tpe = seeds.map((s) => campaign('tpe', s, opts));
    const random = seeds.map((s) => campaign('random', s, opts));
    const wins = seeds.filter((_, i) => tpe[i] < random[i]).length;
    expect(wins / seeds.length).toBeGreaterThanOrEqual(minWinRate);
    expect(median(tpe)).toBeLessThan(maxMedianRatio * median(random));
  });
});
