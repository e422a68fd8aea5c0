// The built-in task as a bench objective: train the char-level model in-process for a configuration and seed, and
// score it on the public and held-out loss items. Deterministic in (params, seed), so results are cached.
import { corpusDirOf, ensureCorpus, evalSplitFiles, readTrainFiles } from '../../tasks/builtin-code/corpus-cache';
import { resolveConfig } from '../../core/config';
import { buildLossItems } from '../../tasks/builtin-code/eval-items';
import { BUILTIN_DEFAULT_PARAMS } from '../../tasks/builtin-code/search-space';
import { scoreLossItems } from '../../formats/charlm/model';
import { TrainingDivergedError, trainCharLm } from '../../trainers/charlm/train';
import { paramsKey } from '../../core/sampler';
import type { Params } from '../../core/spec';

export interface Scored {
  public: number;
  heldout: number;
}

export interface BuiltinEvaluator {
  /** Public and held-out bits per byte; undefined when training diverged. */
  evaluate(params: Params, seed: number): Scored | undefined;
  /** Distinct training runs so far. */
  trained(): number;
  describe: string;
}

export async function builtinEvaluator(opts: { steps: number; lossItems: number }): Promise<BuiltinEvaluator> {
  const corpusDir = corpusDirOf(resolveConfig(process.env, process.cwd()).home);
  const manifest = await ensureCorpus(corpusDir);
  const { text } = readTrainFiles(corpusDir, manifest);
  const publicItems = buildLossItems('public', await evalSplitFiles('public'), { count: opts.lossItems, seed: 1 });
  const heldoutItems = buildLossItems('heldout', await evalSplitFiles('heldout'), { count: opts.lossItems, seed: 1 });
  const cache = new Map<string, Scored | undefined>();
  let trained = 0;
  return {
    describe: `corpus ${manifest.contentSha256.slice(0, 12)}, ${text.length} train bytes`,
    trained: () => trained,
    evaluate(p, seed) {
      const key = `${seed}:${paramsKey(p)}`;
      if (cache.has(key)) return cache.get(key);
      let r: Scored | undefined;
      try {
        const { model } = trainCharLm({ text, params: { ...BUILTIN_DEFAULT_PARAMS, ...p, steps: opts.steps }, seed });
        r = { public: scoreLossItems(model, publicItems).bitsPerByte, heldout: scoreLossItems(model, heldoutItems).bitsPerByte };
      } catch (err) {
        if (!(err instanceof TrainingDivergedError)) throw err;
      }
      trained++;
      cache.set(key, r);
      return r;
    },
  };
}

/** Held-out score of the best-by-public trial among the first `budget`; public picks, held-out only reports. */
export function heldoutOfBest(scores: (Scored | undefined)[], budget: number): number {
  let best: Scored | undefined;
  for (const r of scores.slice(0, budget)) if (r && (!best || r.public < best.public)) best = r;
  return best ? best.heldout : NaN;
}
