// The dev server's request counters, read from its Prometheus endpoint: how many RPCs of each kind the workers and
// the client made (`service_requests` of the frontend), and how many persistence operations the server ran for them
// (`persistence_requests`). A bench reads them before and after a case and divides the difference by its experiments.
// The server reports its counters to the endpoint once a second, so a read first waits that long for the last ones.
import { setTimeout as sleep } from 'node:timers/promises';

/** The server's metrics reporting interval (tally's, in the dev server), with a margin. */
const REPORT_INTERVAL_MS = 1500;

/** Counter totals by `<metric>:<operation>` (summed over every other label). */
export type RequestCounts = Map<string, number>;

const COUNTERS = ['service_requests', 'persistence_requests'];

export async function readRequestCounts(metricsUrl: string): Promise<RequestCounts> {
  await sleep(REPORT_INTERVAL_MS);
  const res = await fetch(metricsUrl);
  if (!res.ok) throw new Error(`${metricsUrl}: HTTP ${res.status}`);
  const counts: RequestCounts = new Map();
  for (const line of (await res.text()).split('\n')) {
    const m = /^(\w+)\{([^}]*)\}\s+(\S+)$/.exec(line);
    if (!m || !COUNTERS.includes(m[1])) continue;
    const op = /(?:^|,)operation="([^"]*)"/.exec(m[2])?.[1] ?? '?';
    // The frontend's own counters only: the history and matching services count the same requests again inside.
    if (m[1] === 'service_requests' && !/service_name="frontend"/.test(m[2])) continue;
    const key = `${m[1]}:${op}`;
    counts.set(key, (counts.get(key) ?? 0) + Number(m[3]));
  }
  return counts;
}

/** after − before per key, divided by `per`, largest first, zeros dropped. */
export function countsPer(before: RequestCounts, after: RequestCounts, per: number): [string, number][] {
  return [...after.entries()]
    .map(([k, v]): [string, number] => [k, (v - (before.get(k) ?? 0)) / per])
    .filter(([, v]) => v > 0)
    .sort((a, b) => b[1] - a[1]);
}

/** Sum of the values of `metric` (e.g. 'service_requests') in `counts`. */
export function totalOf(counts: [string, number][], metric: string): number {
  return counts.filter(([k]) => k.startsWith(`${metric}:`)).reduce((n, [, v]) => n + v, 0);
}
