// Sample efficiency of the built-in proposer on the real built-in task: for TPE and random search, with the same
// seeds, the held-out bits per byte of the configuration that is best on public after 8, 16 and 32 trials.
// Run: node bin/run-ts.js bench/sample-efficiency.ts [--quick] [--reps N] [--steps N] [--trials N] [--loss-items N]
//   [--batch N] [--startup N] [--samplers tpe,random,tpe-multivariate,tpe-scott]   (BENCH_QUICK=1: --quick)
// Trains in-process with trainCharLm; no Temporal or database needed.
import { BUILTIN_DEFAULT_PARAMS, BUILTIN_SEARCH_SPACE } from '../tasks/builtin-code/search-space';
import { builtinEvaluator, heldoutOfBest, type Scored } from './lib/builtin-evaluator';
import { proposeBatch, type SamplerKind, type TpeOptions, type Trial } from '../core/sampler';
import type { Params } from '../core/spec';
import { runBench } from './lib/run-bench';

/** The proposers the bench can compare; `random` is the baseline every ratio is taken against. */
const SAMPLERS: Record<string, { kind: SamplerKind; tpe?: TpeOptions }> = {
  tpe: { kind: 'tpe' },
  random: { kind: 'random' },
  'tpe-multivariate': { kind: 'tpe', tpe: { multivariate: true } },
  'tpe-scott': { kind: 'tpe', tpe: { multivariate: true, bandwidth: 'scott' } },
};

interface BenchSettings {
  /** Names from SAMPLERS; `random` is always included. @default tpe, random */
  samplers: string[];
  /** Campaigns per sampler; repetition r uses seed r + 1 for the proposer and every trainer. */
  reps: number;
  /** Trials per campaign; the report reads the best-by-public after each budget up to this. */
  trials: number;
  /** Trial counts the table reports: 8, 16 and 32 where they fit, and always `trials`. */
  budgets: number[];
  /** Training steps per trial (overrides the trainer default). */
  steps: number;
  /** Loss chunks per eval split (the spec's `task.lossItems`). */
  lossItems: number;
  /** Proposals per batch and TPE's random start-up trials; the spec's defaults (4 and 4) unless given. */
  batchSize: number;
  startupTrials: number;
}

function settingsFromArgs(argv: string[]): BenchSettings {
  const quick = argv.includes('--quick') || process.env.BENCH_QUICK === '1';
  const num = (flag: string, dflt: number, min = 1): number => {
    const i = argv.indexOf(flag);
    const v = i >= 0 ? Number(argv[i + 1]) : dflt;
    if (!Number.isInteger(v) || v < min) throw new Error(`${flag} needs an integer of at least ${min}`);
    return v;
  };
  const trials = num('--trials', 32);
  const at = argv.indexOf('--samplers');
  const samplers = at >= 0 ? (argv[at + 1] ?? '').split(',') : ['tpe', 'random'];
  const unknown = samplers.filter((n) => !SAMPLERS[n]);
  if (unknown.length) throw new Error(`--samplers: unknown ${unknown.join(', ')} (known: ${Object.keys(SAMPLERS).join(', ')})`);
  if (!samplers.includes('random')) samplers.push('random');
  return {
    samplers,
    reps: num('--reps', quick ? 3 : 5),
    trials,
    budgets: [...[8, 16, 32].filter((b) => b < trials), trials],
    steps: num('--steps', quick ? 150 : Number(BUILTIN_DEFAULT_PARAMS.steps)),
    lossItems: num('--loss-items', 40),
    batchSize: num('--batch', 4),
    startupTrials: num('--startup', 4, 0),
  };
}

/** One campaign's trials in order, each with its public and held-out score (undefined when training diverged). */
function runCampaign(
  sampler: string,
  seed: number,
  s: BenchSettings,
  evaluate: (p: Params, seed: number) => Scored | undefined,
): (Scored | undefined)[] {
  const { kind, tpe } = SAMPLERS[sampler];
  const history: Trial[] = [];
  const scores: (Scored | undefined)[] = [];
  while (history.length < s.trials) {
    const count = Math.min(s.batchSize, s.trials - history.length);
    const batch = proposeBatch({ kind, space: BUILTIN_SEARCH_SPACE, history, count, seed, startupTrials: s.startupTrials, tpe });
    for (const params of batch) {
      const r = evaluate(params, seed);
      // A diverged run is 'failed' here as in the inner loop, which records a crashed trainer that way.
      history.push(r ? { params, value: r.public, state: 'finished' } : { params, state: 'failed' });
      scores.push(r);
    }
  }
  return scores;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sd = (xs: number[]) => Math.sqrt(xs.reduce((a, b) => a + (b - mean(xs)) ** 2, 0) / Math.max(1, xs.length - 1));

async function run(): Promise<void> {
  const s = settingsFromArgs(process.argv.slice(2));
  const ev = await builtinEvaluator({ steps: s.steps, lossItems: s.lossItems });
  console.log(`sample efficiency on the built-in task (${ev.describe})`);
  console.log(`settings: ${JSON.stringify(s)}`);
  const evaluate = ev.evaluate;
  const started = Date.now();

  const results: Record<string, number[][]> = Object.fromEntries(s.samplers.map((n) => [n, []]));
  const width = Math.max(...s.samplers.map((n) => n.length));
  for (let rep = 0; rep < s.reps; rep++) {
    for (const name of s.samplers) {
      const scores = runCampaign(name, rep + 1, s, evaluate);
      results[name].push(s.budgets.map((b) => heldoutOfBest(scores, b)));
      const failed = scores.filter((x) => !x).length;
      const figures = results[name][rep].map((v) => v.toFixed(4)).join(' / ');
      console.log(
        `  seed ${rep + 1} ${name.padEnd(width)} held-out of best-by-public: ${figures}${failed ? ` (${failed} diverged)` : ''}  [${ev.trained()} runs, ${((Date.now() - started) / 1000).toFixed(0)} s]`,
      );
    }
  }

  console.log('\nheld-out bits per byte of the best-by-public configuration (mean ± sd over seeds; lower is better);');
  console.log('ratio: mean over the mean of random search; better: seeds on which it beat random search');
  console.log(
    [
      'trials',
      ...s.samplers.map((n) => n.padEnd(17)),
      ...s.samplers.filter((n) => n !== 'random').flatMap((n) => [`${n}/random`, 'better']),
    ].join(' | '),
  );
  s.budgets.forEach((b, j) => {
    const col = (n: string) => results[n].map((r) => r[j]);
    const random = col('random');
    const cells = [String(b).padStart(6), ...s.samplers.map((n) => `${mean(col(n)).toFixed(4)} ± ${sd(col(n)).toFixed(4)}`.padEnd(17))];
    for (const n of s.samplers.filter((x) => x !== 'random')) {
      const wins = col(n).filter((v, i) => v < random[i]).length;
      cells.push((mean(col(n)) / mean(random)).toFixed(4).padStart(n.length + 7), `${wins}/${s.reps}`.padStart(6));
    }
    console.log(cells.join(' | '));
  });
  console.log(`\n${ev.trained()} training runs in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

runBench(run);
