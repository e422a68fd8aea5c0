// The complementary error function, shared by the TPE sampler's truncated normals and the gate's normal CDF.

/** Complementary error function, Chebyshev fit with relative error below 1.2e-7 everywhere (Numerical Recipes). */
export function erfc(x: number): number {
  const z = x < 0 ? -x : x;
  const t = 1 / (1 + 0.5 * z);
  const poly =
    -1.26551223 +
    t *
      (1.00002368 +
        t *
          (0.37409196 +
            t *
              (0.09678418 +
                t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  const r = t * Math.exp(-z * z + poly);
  return x >= 0 ? r : 2 - r;
}
