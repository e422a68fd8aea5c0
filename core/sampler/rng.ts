// A small seeded PRNG for the built-in proposer: proposals must be a pure function of (space, history, seed),
// so nothing in core/sampler touches Math.random. mulberry32 is fast, has a 2^32 period and passes gjrand/PractRand
// far enough for drawing a few thousand candidates per batch.

// Bound once: a global lookup per call is slow inside jest's vm sandbox, and next() runs in every sampling loop.
const { imul, log, sqrt, cos, sin, floor, PI } = Math;

/** A deterministic random stream; every method advances it. */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform in [low, high). */
  uniform(low: number, high: number): number;
  /** Uniform integer in [low, high], both inclusive. */
  int(low: number, high: number): number;
  /** Standard normal (Box-Muller). */
  normal(): number;
  /** Index drawn with probability proportional to `weights` (non-negative, not all zero). */
  weighted(weights: readonly number[]): number;
}

/**
 * Mixes any number of 32-bit integers into one seed (the murmur3 finaliser over a running hash), so
 * `mixSeed(seed, historyLength)` gives unrelated streams for neighbouring inputs.
 */
export function mixSeed(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const p of parts) {
    h = imul(h ^ (p | 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 0;
}

/** A mulberry32 stream. Seeds are taken as 32-bit integers; non-integers are truncated. */
export function createRng(seed: number): Rng {
  let state = mixSeed(Math.trunc(seed));
  // A Box-Muller draw yields two normals; keep the second instead of wasting it.
  let spareNormal: number | undefined;

  const next = (): number => {
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = imul(t ^ (t >>> 15), t | 1);
    t ^= t + imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };

  return {
    next,
    uniform: (low, high) => low + (high - low) * next(),
    int: (low, high) => low + floor(next() * (high - low + 1)),
    normal: () => {
      if (spareNormal !== undefined) {
        const z = spareNormal;
        spareNormal = undefined;
        return z;
      }
      // 1 - next() lies in (0, 1], so the log is finite.
      const r = sqrt(-2 * log(1 - next()));
      const theta = 2 * PI * next();
      spareNormal = r * sin(theta);
      return r * cos(theta);
    },
    weighted: (weights) => {
      let total = 0;
      for (const w of weights) total += w;
      let u = next() * total;
      for (let i = 0; i < weights.length; i++) {
        u -= weights[i];
        if (u < 0) return i;
      }
      // Rounding can leave u a hair above zero; the last positive weight is the right answer then.
      for (let i = weights.length - 1; i >= 0; i--) if (weights[i] > 0) return i;
      return weights.length - 1;
    },
  };
}
