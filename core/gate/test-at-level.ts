// The paired test held to a level that α-spending may set far below the default resamples' resolution: the one
// place heldoutImprovement's p-value is refined, so a small α_t is a harder bar, never an unreachable one.
import { pairedBootstrap, pairedTest, signFlipTest, type PairedTestResult } from './paired-test';
import type { GateSettings } from './settings';

/** Resamples the sign-flip test may take to resolve a small α_t; past it a level is tested at this resolution. */
export const MAX_LEVEL_RESAMPLES = 1_000_000;
/** Exceedances below which the coarse p-value could still fall under α_t at a finer resolution. */
const REFINE_BELOW = 20;

/**
 * The paired test held to a level α_t that may lie below the default resamples' resolution (1/(R+1)). A p-value that
 * the coarse run puts near or below the level is recomputed from fresh resamples, about 20/α_t of them (capped at
 * MAX_LEVEL_RESAMPLES). Valid: a discovery needs the fresh run's p-value, itself a valid p-value, to be under α_t;
 * the coarse run only decides whether to look.
 */
export function pairedTestAtLevel(deltas: readonly number[], s: GateSettings, level: number): PairedTestResult {
  const coarse = pairedTest(deltas, s);
  if (coarse.exact || level * (coarse.resamples + 1) >= REFINE_BELOW) return coarse;
  const exceedances = coarse.pValue * (coarse.resamples + 1) - 1;
  if (exceedances >= REFINE_BELOW) return coarse;
  const resamples = Math.min(MAX_LEVEL_RESAMPLES, Math.ceil(REFINE_BELOW / level));
  const seed = s.seed ^ 0x1e7e1;
  const fine =
    s.test === 'bootstrap'
      ? pairedBootstrap(deltas, { resamples, seed, alpha: s.alpha }).pValue
      : signFlipTest(deltas, { resamples, seed }).pValue;
  return { ...coarse, pValue: fine, resamples };
}
