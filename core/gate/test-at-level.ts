// The paired test held to a level that α-spending may set far below the default resamples' resolution: the one
// place heldoutImprovement's p-value is refined, so a small α_t is a harder bar, never an unreachable one.
import { pairedBootstrap, pairedTest, signFlipTest, type PairedTestResult } from './paired-test';
import type { GateSettings } from './settings';

/** Resamples the sign-flip test may take to resolve a small α_t; past it a level is tested at this resolution. */
export const MAX_LEVEL_RESAMPLES = 1_000_000;
/** Exceedances below which the coarse p-value could still fall under α_t at a finer resolution. */
const REFINE_BELOW = 20;

/**
 * The paired test held to a level α_t that may lie below the default resamples' resolution (1/(R+1)). While the
 * resolution is too coarse for α_t and the p-value could still fall under it (fewer than 20 exceedances), the p-value is
 * recomputed from ten times as many fresh resamples, up to about 20/α_t (capped at MAX_LEVEL_RESAMPLES); a candidate
 * clearly above the level stops at the first stage that shows it. Valid: a stage that stops early cannot make a
 * discovery (its p-value is at least 21/(R+1) > α_t), so a discovery needs the last stage's p-value, a valid p-value
 * from its own fresh resamples, to be under α_t; the earlier stages only decide whether to look further.
 */
export function pairedTestAtLevel(deltas: readonly number[], s: GateSettings, level: number): PairedTestResult {
  const coarse = pairedTest(deltas, s);
  if (coarse.exact) return coarse;
  const enough = Math.min(MAX_LEVEL_RESAMPLES, Math.ceil(REFINE_BELOW / level));
  let { pValue, resamples } = coarse;
  for (let stage = 1; resamples < enough && pValue * (resamples + 1) - 1 < REFINE_BELOW; stage++) {
    resamples = Math.min(enough, resamples * 10);
    const seed = s.seed ^ (0x1e7e1 + stage);
    pValue =
      s.test === 'bootstrap'
        ? pairedBootstrap(deltas, { resamples, seed, alpha: s.alpha }).pValue
        : signFlipTest(deltas, { resamples, seed }).pValue;
  }
  return { ...coarse, pValue, resamples };
}
