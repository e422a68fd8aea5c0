// Sample efficiency of the built-in proposer on the real built-in task: for TPE and random search, with the same
// seeds, the held-out bits per byte of the configuration that is best on public after 8, 16 and 32 trials.
// Run: node bin/run-ts.js bench/sample-efficiency.ts [--quick] [--reps N] [--steps N] [--trials N] [--loss-items N]
// (BENCH_QUICK=1 is the same as --quick). Trains in-process with trainCharLm, no Temporal or database needed.
import { ensureCorpus, readSplit, readTrainFiles } from '../activities/builtin-task/corpus-cache';
import { corpusDirOf } from '../activities/paths';
import { resolveConfig } from '../core/config';
import { buildLossItems, type LossItem } from '../core/builtin-task/eval-items';
import { BUILTIN_DEFAULT_PARAMS, BUILTIN_SEARCH_SPACE } from '../core/builtin-task/search-space';
import { CharLm, bitsPerByte } from '../core/charlm/model';
import { TrainingDivergedError, trainCharLm } from '../core/charlm/train';
import { paramsKey, proposeBatch, type SamplerKind, type Trial } from '../core/sampler';
import type { Params } from '../core/spec';

interface BenchSettings {
  /** Campaigns per sampler; repetition r uses seed r + 1 for the proposer and every trainer. */
  reps: number;
  /** Trials per campaign; the report reads the best-by-public after each budget up to this. */
  trials: number;
  budgets: number[];
  /** Training steps per trial (overrides the trainer default). */
  steps: number;
  /** Loss chunks per eval split (the spec's `task.lossItems`). */
  lossItems: number;
  /** Proposals per batch and start-up trials, the spec's defaults. */
  batchSize: number;
  startupTrials: number;
}

function settingsFromArgs(argv: string[]): BenchSettings {
  const quick = argv.includes('--quick') || process.env.BENCH_QUICK === '1';
  const num = (flag: string, dflt: number): number => {
    const i = argv.indexOf(flag);
    const v = i >= 0 ? Number(argv[i + 1]) : dflt;
    if (!Number.isInteger(v) || v < 1) throw new Error(`${flag} needs a positive integer`);
    return v;
  };
  const trials = num('--trials', 32);
  return {
    reps: num('--reps', quick ? 3 : 5),
    trials,
    budgets: [8, 16, 32].filter((b) => b <= trials),
    steps: num('--steps', quick ? 150 : Number(BUILTIN_DEFAULT_PARAMS.steps)),
    lossItems: num('--loss-items', 40),
    batchSize: 4,
    startupTrials: 4,
  };
}

interface Scored {
  public: number;
  heldout: number;
}

function score(model: CharLm, items: LossItem[]): number {
  let bits = 0;
  let bytes = 0;
  for (const item of items) {
    const r = bitsPerByte(model, item.prompt, item.reference);
    bits += r.bits;
    bytes += r.bytes;
  }
  return bytes ? bits / bytes : NaN;
}

/** One campaign's trials in order, each with its public and held-out score (undefined when training diverged). */
function runCampaign(kind: SamplerKind, seed: number, s: BenchSettings, evaluate: (p: Params, seed: number) => Scored | undefined): (Scored | undefined)[] {
  const history: Trial[] = [];
  const scores: (Scored | undefined)[] = [];
  while (history.length < s.trials) {
    const count = Math.min(s.batchSize, s.trials - history.length);
    const batch = proposeBatch({ kind, space: BUILTIN_SEARCH_SPACE, history, count, seed, startupTrials: s.startupTrials });
    for (const params of batch) {
      const r = evaluate(params, seed);
      // A diverged run is 'failed' here as in the inner loop, which records a crashed trainer that way.
      history.push(r ? { params, value: r.public, state: 'finished' } : { params, state: 'failed' });
      scores.push(r);
    }
  }
  return scores;
}

/** Held-out score of the best-by-public trial among the first `budget`; public picks, held-out only reports. */
function heldoutOfBest(scores: (Scored | undefined)[], budget: number): number {
  let best: Scored | undefined;
  for (const r of scores.slice(0, budget)) if (r && (!best || r.public < best.public)) best = r;
  return best ? best.heldout : NaN;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sd = (xs: number[]) => Math.sqrt(xs.reduce((a, b) => a + (b - mean(xs)) ** 2, 0) / Math.max(1, xs.length - 1));

async function run(): Promise<void> {
  const s = settingsFromArgs(process.argv.slice(2));
  const corpusDir = corpusDirOf(resolveConfig(process.env, process.cwd()).home);
  const manifest = await ensureCorpus(corpusDir);
  const { text } = readTrainFiles(corpusDir, manifest);
  const publicItems = buildLossItems('public', readSplit(corpusDir, 'public'), { count: s.lossItems, seed: 1 });
  const heldoutItems = buildLossItems('heldout', readSplit(corpusDir, 'heldout'), { count: s.lossItems, seed: 1 });
  console.log(`sample efficiency on the built-in task (corpus ${manifest.contentSha256.slice(0, 12)}, ${text.length} train bytes)`);
  console.log(`settings: ${JSON.stringify(s)}`);

  // Training is deterministic in (params, seed), and both samplers draw the same start-up batch for a seed.
  const cache = new Map<string, Scored | undefined>();
  let trained = 0;
  const started = Date.now();
  const evaluate = (p: Params, seed: number): Scored | undefined => {
    const key = `${seed}:${paramsKey(p)}`;
    if (cache.has(key)) return cache.get(key);
    let r: Scored | undefined;
    try {
      const { model } = trainCharLm({ text, params: { ...BUILTIN_DEFAULT_PARAMS, ...p, steps: s.steps }, seed });
      r = { public: score(model, publicItems), heldout: score(model, heldoutItems) };
    } catch (err) {
      if (!(err instanceof TrainingDivergedError)) throw err;
    }
    trained++;
    cache.set(key, r);
    return r;
  };

  const results: Record<SamplerKind, number[][]> = { tpe: [], random: [] };
  for (let rep = 0; rep < s.reps; rep++) {
    for (const kind of ['tpe', 'random'] as const) {
      const scores = runCampaign(kind, rep + 1, s, evaluate);
      results[kind].push(s.budgets.map((b) => heldoutOfBest(scores, b)));
      const failed = scores.filter((x) => !x).length;
      console.log(`  seed ${rep + 1} ${kind.padEnd(6)} held-out of best-by-public: ${results[kind][rep].map((v) => v.toFixed(4)).join(' / ')}${failed ? ` (${failed} diverged)` : ''}  [${trained} runs, ${((Date.now() - started) / 1000).toFixed(0)} s]`);
    }
  }

  console.log('\nheld-out bits per byte of the best-by-public configuration (mean ± sd over seeds; lower is better)');
  console.log('trials | TPE             | random          | TPE/random | TPE better');
  s.budgets.forEach((b, j) => {
    const t = results.tpe.map((r) => r[j]);
    const r = results.random.map((x) => x[j]);
    const wins = t.filter((v, i) => v < r[i]).length;
    const cell = (xs: number[]) => `${mean(xs).toFixed(4)} ± ${sd(xs).toFixed(4)}`.padEnd(15);
    console.log(`${String(b).padStart(6)} | ${cell(t)} | ${cell(r)} | ${(mean(t) / mean(r)).toFixed(4).padStart(10)} | ${wins}/${s.reps}`);
  });
  console.log(`\n${trained} training runs in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
