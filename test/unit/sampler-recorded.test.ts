// The built-in samplers' proposals, pinned: the same seed and history must give the same configurations, bit for
// bit, whatever the code around them becomes (the sampler registry of core/sampler/registry.ts was built against
// this). test/fixtures/sampler-proposals.json was recorded with the closed switch of core/sampler/index.ts before
// the samplers became plugins; campaign version ids, hashed over the parsed spec, are pinned the same way.
// To re-record after a deliberate change: RECORD_SAMPLER_PROPOSALS=1 npx jest test/unit/sampler-recorded.test.ts
import fs from 'node:fs';
import path from 'node:path';
import type { Params, SearchSpace } from '../../core/spec';
import { MIXED_SPACE } from '../helpers/search-spaces';
import { fixKnobs, proposeBatch, type Trial } from '../../core/sampler';
import { createRng, mixSeed } from '../../core/sampler/rng';
import { campaignVersionOf } from '../../services/campaigns/campaign-versions';

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'sampler-proposals.json');
const RECORD = process.env.RECORD_SAMPLER_PROPOSALS === '1';

const mixed = MIXED_SPACE;
/** 12 configurations: a campaign of 16 exhausts it, so the enumeration fallback and the repeat run. */
const small: SearchSpace = {
  layers: { type: 'int', low: 1, high: 3, log: false },
  act: { type: 'categorical', choices: ['relu', 'gelu', 'tanh', 'silu'] },
};

function objective(p: Params): number {
  const act: Record<string, number> = { relu: 0.3, gelu: 0, tanh: 1, silu: 0.15 };
  const lr = p.lr === undefined ? 0 : Math.log10(p.lr as number) + 2.5;
  const dropout = p.dropout === undefined ? 0 : ((p.dropout as number) - 0.1) * 2;
  const width = p.width === undefined ? 0 : Math.log2(p.width as number) - 8;
  return lr * lr + dropout * dropout + ((p.layers as number) - 3) ** 2 / 7 + 0.25 * width * width + act[p.act as string];
}

interface Scenario {
  kind: 'tpe' | 'random';
  space: SearchSpace;
  seed: number;
  startupTrials: number;
  batches: number;
  batch: number;
  multivariate?: boolean;
  bandwidth?: 'neighbour' | 'scott';
}

/** Batches proposed in turn; each result is fed back, with every third trial pruned and every seventh failed. */
function campaign(s: Scenario): Params[][] {
  const history: Trial[] = [];
  const out: Params[][] = [];
  const noise = createRng(mixSeed(s.seed, 99));
  const tpe = s.multivariate === undefined ? undefined : { multivariate: s.multivariate, bandwidth: s.bandwidth };
  for (let b = 0; b < s.batches; b++) {
    const batch = proposeBatch({
      kind: s.kind,
      space: s.space,
      history,
      count: s.batch,
      seed: s.seed,
      startupTrials: s.startupTrials,
      tpe,
    });
    out.push(batch);
    for (const params of batch) {
      const n = history.length;
      if (n % 7 === 6) history.push({ params, state: 'failed' });
      else if (n % 3 === 2) history.push({ params, state: 'pruned' });
      else history.push({ params, state: 'finished', value: objective(params) + 0.05 * noise.normal() });
    }
  }
  // A batch drawn while the last one is still running: pending trials steer TPE (the constant liar).
  const pending = history.slice(-s.batch).map((t) => ({ params: t.params, state: 'pending' as const }));
  out.push(
    proposeBatch({
      kind: s.kind,
      space: s.space,
      history: [...history.slice(0, -s.batch), ...pending],
      count: s.batch,
      seed: s.seed,
      startupTrials: s.startupTrials,
      tpe,
    }),
  );
  return out;
}

const scenarios: Record<string, Scenario> = {
  'tpe mixed': { kind: 'tpe', space: mixed, seed: 1, startupTrials: 4, batches: 8, batch: 4 },
  'tpe mixed seed 7': { kind: 'tpe', space: mixed, seed: 7, startupTrials: 2, batches: 6, batch: 3 },
  'tpe multivariate': { kind: 'tpe', space: mixed, seed: 3, startupTrials: 4, batches: 6, batch: 4, multivariate: true },
  'tpe multivariate scott': {
    kind: 'tpe',
    space: mixed,
    seed: 3,
    startupTrials: 4,
    batches: 5,
    batch: 4,
    multivariate: true,
    bandwidth: 'scott',
  },
  'tpe pinned knobs': { kind: 'tpe', space: fixKnobs(mixed, { layers: 4, act: 'gelu' }), seed: 11, startupTrials: 3, batches: 5, batch: 2 },
  'tpe small space exhausted': { kind: 'tpe', space: small, seed: 2, startupTrials: 2, batches: 4, batch: 4 },
  'random mixed': { kind: 'random', space: mixed, seed: 1, startupTrials: 4, batches: 5, batch: 4 },
  'random small space exhausted': { kind: 'random', space: small, seed: 5, startupTrials: 0, batches: 4, batch: 4 },
};

/** Specs whose version ids must not move: defaults only, and each sampler and pruner field set. */
const specs: Record<string, unknown> = {
  defaults: { name: 'pinned', task: { kind: 'builtin-code' }, trainer: { command: 'builtin' }, searchSpace: small },
  'random, no pruning': {
    name: 'pinned',
    task: { kind: 'builtin-code' },
    trainer: { command: 'builtin' },
    searchSpace: mixed,
    innerLoop: { proposer: 'random', startupTrials: 0, pruning: { rule: 'none' } },
  },
  'tpe, median pruning': {
    name: 'pinned',
    task: { kind: 'builtin-code' },
    trainer: { command: 'builtin' },
    searchSpace: mixed,
    innerLoop: {
      proposer: 'tpe',
      startupTrials: 6,
      seed: 9,
      pruning: { rule: 'median', warmupSteps: 40, minCompleted: 2, metric: 'loss' },
    },
  },
};

function current() {
  return {
    proposals: Object.fromEntries(Object.entries(scenarios).map(([name, s]) => [name, campaign(s)])),
    versionIds: Object.fromEntries(Object.entries(specs).map(([name, s]) => [name, campaignVersionOf(s).versionId])),
  };
}

const now = current();
if (RECORD) fs.writeFileSync(FIXTURE, JSON.stringify(now, null, 2) + '\n');
const recorded = JSON.parse(fs.readFileSync(FIXTURE, 'utf8')) as ReturnType<typeof current>;

test.each(Object.keys(scenarios))('%s: the recorded proposals, batch by batch', (name) => {
  expect(now.proposals[name]).toEqual(recorded.proposals[name]);
  // toEqual treats -0 and 0 alike and JSON keeps every double exactly; the key order is part of the record too.
  expect(JSON.stringify(now.proposals[name])).toBe(JSON.stringify(recorded.proposals[name]));
});

test('campaign version ids of specs using the sampler and pruner fields are the recorded ones', () => {
  expect(now.versionIds).toEqual(recorded.versionIds);
});
