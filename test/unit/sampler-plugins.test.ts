// Samplers and pruners as plugins: the registries (a name the spec does not know is one line saying what and where),
// the grid sampler, and a toy sampler and a toy pruner registered by a test as a plugin would be.
import { z } from 'zod';
import { createPruner, registerPruner, unregisterPruner, type MetricPoint, type PeerCurve, type Pruner } from '../../core/pruning';
import { proposeBatch, registerSampler, samplerNames, unregisterSampler, type Sampler, type Trial } from '../../core/sampler';
import { gridProblems, gridValues } from '../../core/sampler/grid';
import { InvalidSpecError, type Params, type SearchSpace } from '../../core/spec';
import { parseSpec } from '../../tasks/task-spec';

const space: SearchSpace = {
  lr: { type: 'float', low: 1e-4, high: 1e-1, log: true },
  layers: { type: 'int', low: 1, high: 3, log: false },
  act: { type: 'categorical', choices: ['relu', 'gelu'] },
};
const spec = (innerLoop: Record<string, unknown>) => ({
  name: 'plugins',
  task: { kind: 'builtin-code' },
  trainer: { command: 'builtin' },
  searchSpace: space,
  innerLoop,
});
const problems = (raw: unknown): string[] => {
  try {
    parseSpec(raw);
    return [];
  } catch (e) {
    if (e instanceof InvalidSpecError) return e.problems;
    throw e;
  }
};

/** Walks a fixed list: the n-th trial of the campaign gets the n-th point. */
const walk: Params[] = [
  { lr: 0.001, layers: 1, act: 'relu' },
  { lr: 0.01, layers: 2, act: 'gelu' },
  { lr: 0.05, layers: 3, act: 'relu' },
];
class WalkSampler implements Sampler {
  propose(ctx: { history: readonly Trial[]; count: number }): Params[] {
    return Array.from({ length: ctx.count }, (_, i) => walk[(ctx.history.length + i) % walk.length]);
  }
}

describe('the sampler registry', () => {
  beforeAll(() => registerSampler('walk', () => new WalkSampler()));
  afterAll(() => unregisterSampler('walk'));

  test('built in: tpe, random and grid; a registered sampler is chosen by name', () => {
    expect(samplerNames()).toEqual(['grid', 'random', 'tpe', 'walk']);
    expect(parseSpec(spec({ proposer: 'walk' })).innerLoop.proposer).toBe('walk');
    const history: Trial[] = [{ params: walk[0], state: 'finished', value: 1 }];
    expect(proposeBatch({ kind: 'walk', space, history, count: 2, seed: 1, startupTrials: 0 })).toEqual([walk[1], walk[2]]);
  });

  test('an unknown sampler or pruner is one line naming the field, the name and what is registered', () => {
    expect(problems(spec({ proposer: 'cmaes' }))).toEqual([
      'innerLoop.proposer: unknown sampler "cmaes"; registered: grid, random, tpe, walk',
    ]);
    expect(problems(spec({ pruning: { rule: 'hyperband' } }))).toEqual([
      'innerLoop.pruning.rule: unknown pruner "hyperband"; registered: median, none',
    ]);
    expect(() => proposeBatch({ kind: 'cmaes', space, history: [], count: 1, seed: 1, startupTrials: 0 })).toThrow(
      'innerLoop.proposer: unknown sampler "cmaes"',
    );
  });

  test("samplerOptions are checked against the sampler's schema", () => {
    expect(problems(spec({ proposer: 'walk', samplerOptions: { x: 1 } }))).toEqual([
      'innerLoop.samplerOptions: the walk sampler takes no options',
    ]);
    expect(problems(spec({ proposer: 'tpe', samplerOptions: { multivariate: 'yes' } }))).toEqual([
      'innerLoop.samplerOptions.multivariate: Invalid input: expected boolean, received string',
    ]);
    expect(problems(spec({ proposer: 'tpe', samplerOptions: { multivariate: true, bandwidth: 'scott' } }))).toEqual([]);
    expect(problems(spec({ proposer: 'grid', samplerOptions: { values: { layers: [2, 9], depth: [1] } } }))).toEqual([
      'innerLoop.samplerOptions.values.layers: 9 is outside [1, 3]',
      'innerLoop.samplerOptions.values.depth: not in the search space',
    ]);
    expect(problems(spec({ proposer: 'grid', samplerOptions: { points: 1 } }))).toEqual([
      'innerLoop.samplerOptions.points: Too small: expected number to be >=2',
    ]);
  });

  test('names are checked when registered, and a built-in cannot be replaced', () => {
    expect(() => registerSampler('tpe', () => new WalkSampler())).toThrow('a sampler named "tpe" is already registered');
    expect(() => registerSampler('My Sampler', () => new WalkSampler())).toThrow('is not a sampler name');
    expect(() => unregisterSampler('random')).toThrow('"random" is built in');
  });

  test("a plugin's proposals are checked: the count asked for, each valid for the space", () => {
    registerSampler('broken', () => ({ propose: () => [{ lr: 5, layers: 1, act: 'relu' }] }));
    try {
      expect(() => proposeBatch({ kind: 'broken', space, history: [], count: 1, seed: 1, startupTrials: 0 })).toThrow(
        'sampler "broken" proposed an invalid configuration (1 of 1): lr: 5 is outside [0.0001, 0.1]',
      );
      expect(() => proposeBatch({ kind: 'broken', space, history: [], count: 2, seed: 1, startupTrials: 0 })).toThrow(
        'sampler "broken" proposed 1 configurations, 2 were asked for',
      );
    } finally {
      unregisterSampler('broken');
    }
  });
});

describe('the grid sampler', () => {
  test("values per knob: every choice, every int of a short range, `points` evenly spaced on the knob's scale", () => {
    expect(gridValues(space.act, 5)).toEqual(['relu', 'gelu']);
    expect(gridValues(space.layers, 5)).toEqual([1, 2, 3]);
    expect(gridValues(space.lr, 4).map((v) => Number((v as number).toPrecision(6)))).toEqual([0.0001, 0.001, 0.01, 0.1]);
    expect(gridValues({ type: 'int', low: 0, high: 100, log: false }, 3)).toEqual([0, 50, 100]);
    expect(gridValues(space.layers, 5, [3, 1, 7])).toEqual([3, 1]);
  });

  test('every point once, in a seeded order, then repeats; the same seed and history give the same batch', () => {
    const options = { points: 2 };
    const history: Trial[] = [];
    const batches: string[][] = [];
    for (let b = 0; b < 3; b++) {
      const batch = proposeBatch({ kind: 'grid', space, history, count: 4, seed: 3, startupTrials: 0, options });
      expect(proposeBatch({ kind: 'grid', space, history: [...history], count: 4, seed: 3, startupTrials: 0, options })).toEqual(batch);
      batches.push(batch.map((p) => JSON.stringify(p)));
      for (const params of batch) history.push({ params, state: 'finished', value: 0 });
    }
    // 2 lr × 2 layers (1 and 3: two points of a three-value range) × 2 act = 8 points: two batches cover the grid.
    const grid = new Set([...batches[0], ...batches[1]]);
    expect(grid.size).toBe(8);
    expect([...grid].map((p) => JSON.parse(p) as Params).map((p) => p.layers)).not.toContain(2);
    expect(batches[2].every((p) => grid.has(p))).toBe(true);
  });

  test('a grid over the limit is a spec error', () => {
    const wide: SearchSpace = Object.fromEntries(['a', 'b', 'c'].map((k) => [k, { type: 'float', low: 0, high: 1, log: false }]));
    expect(gridProblems(wide, { points: 100 })).toEqual([
      'innerLoop.samplerOptions: the grid has 1000000 points, more than 100000; lower points or list values',
    ]);
    expect(gridProblems(wide, { points: 100, values: { a: [0.5], b: [0, 1] } })).toEqual([]);
  });
});

describe('the pruner registry', () => {
  /** Stops a run at its first point above a fixed threshold, once a peer has finished. */
  class ThresholdPruner implements Pruner {
    constructor(private readonly above: number) {}
    prune(points: readonly MetricPoint[], peers: readonly PeerCurve[]) {
      const p = peers.length > 0 ? points.find((x) => x.value > this.above) : undefined;
      return p && { step: p.step, value: p.value, reason: `loss ${p.value} > ${this.above}` };
    }
  }
  beforeAll(() =>
    registerPruner('threshold', ({ options }) => new ThresholdPruner(options.above), z.strictObject({ above: z.number().default(2) })),
  );
  afterAll(() => unregisterPruner('threshold'));

  const settings = { warmupSteps: 0, minCompleted: 1, metric: 'loss' };
  const points = [
    { step: 10, value: 1 },
    { step: 20, value: 3 },
  ];

  test('a registered pruner is chosen by pruning.rule, with its options; none names no pruner', () => {
    expect(parseSpec(spec({ pruning: { rule: 'threshold', options: { above: 2.5 } } })).innerLoop.pruning.rule).toBe('threshold');
    expect(problems(spec({ pruning: { rule: 'threshold', options: { above: 1, below: 1 } } }))).toEqual([
      'innerLoop.pruning.options: Unrecognized key: "below"',
    ]);
    expect(problems(spec({ pruning: { rule: 'median', options: { x: 1 } } }))).toEqual([
      'innerLoop.pruning.options: the median pruner takes no options',
    ]);
    const pruner = createPruner({ rule: 'threshold', ...settings, options: { above: 2.5 } })!;
    expect(pruner.prune(points, [])).toBeUndefined();
    expect(pruner.prune(points, [[[10, 1]]])).toEqual({ step: 20, value: 3, reason: 'loss 3 > 2.5' });
    // Without options the schema's defaults reach the factory: above 2.
    expect(createPruner({ rule: 'threshold', ...settings })!.prune(points, [[[10, 1]]])).toEqual({
      step: 20,
      value: 3,
      reason: 'loss 3 > 2',
    });
    expect(createPruner({ rule: 'none', ...settings })).toBeUndefined();
    expect(() => createPruner({ rule: 'nope', ...settings })).toThrow('innerLoop.pruning.rule: unknown pruner "nope"');
  });

  test('the median pruner says why, in the words the run records', () => {
    const median = createPruner({ rule: 'median', ...settings, minCompleted: 2 })!;
    const peers: PeerCurve[] = [
      [
        [10, 0.5],
        [20, 1],
      ],
      [
        [10, 0.7],
        [20, 2],
      ],
    ];
    expect(median.prune(points, peers)).toEqual({
      step: 10,
      value: 1,
      reason: 'loss 1.0000 > median 0.6000 of 2 finished runs of earlier batches',
    });
  });
});
