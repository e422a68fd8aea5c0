// `fn` over a list with at most `limit` calls in flight, results in order: graders that start child processes or
// call an endpoint run a few at a time, not all at once.
export async function mapLimit<T, R>(xs: readonly T[], limit: number, fn: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(xs.length);
  let next = 0;
  const worker = async () => {
    while (next < xs.length) {
      const k = next++;
      out[k] = await fn(xs[k]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, xs.length) }, worker));
  return out;
}
