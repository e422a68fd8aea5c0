// The fault harness's own parts (test/faults/), so that a green fault run means something: the proxy really cuts
// PostgreSQL connections, the schedule is a function of its seed, and the comparison with the fault-free run reports
// what no retry explains.
import { Client } from 'pg';
import { faultSchedule, FAULT_KINDS } from '../faults/fault-schedule';
import { verdictViolations, type VerdictRow } from '../faults/invariants';
import type { RunFacts } from '../faults/run-checks';
import { unexplainedDifferences } from '../faults/run-checks';
import { startTcpProxy } from '../faults/tcp-proxy';
import { freshDatabase } from '../helpers/env';

test('the proxy resets open PostgreSQL connections and refuses new ones while cut, then lets them through again', async () => {
  const { url, handle } = await freshDatabase('fault_proxy');
  const target = new URL(url);
  const proxy = await startTcpProxy({ host: target.hostname, port: () => Number(target.port) });
  const via = new URL(url);
  via.port = String(proxy.port);
  const connect = async (): Promise<Client> => {
    const c = new Client({ connectionString: via.toString(), connectionTimeoutMillis: 2_000 });
    c.on('error', () => undefined);
    await c.connect();
    return c;
  };
  try {
    const before = await connect();
    expect((await before.query('SELECT 1 AS one')).rows[0].one).toBe(1);
    expect(proxy.open()).toBe(1);
    const cut = proxy.cut(1_500);
    await expect(before.query('SELECT 1')).rejects.toThrow();
    await expect(connect()).rejects.toThrow();
    expect(await cut).toBe(1);
    const after = await connect();
    expect((await after.query('SELECT 2 AS two')).rows[0].two).toBe(2);
    await after.end();
  } finally {
    await proxy.close();
    await handle.close();
  }
});

test('a fault schedule is a function of its seed: same seed, same faults; each within the window and apart', () => {
  const opts = { count: 6, kinds: FAULT_KINDS, windowMs: 30_000, minGapMs: 1_500 };
  const a = faultSchedule(11, opts);
  expect(faultSchedule(11, opts)).toEqual(a);
  expect(faultSchedule(12, opts)).not.toEqual(a);
  expect(a).toHaveLength(6);
  a.forEach((f, i) => {
    expect(FAULT_KINDS).toContain(f.kind);
    expect(f.atMs).toBeLessThanOrEqual(30_000);
    if (i > 0) expect(f.atMs - a[i - 1].atMs).toBeGreaterThanOrEqual(1_500);
  });
});

describe('the comparison with the fault-free run', () => {
  const facts = (over: Partial<RunFacts> = {}): RunFacts => ({
    experiments: [
      { key: '0:0', params: { lr: 0.01 }, status: 'succeeded', attempts: 1 },
      { key: '0:1', params: { lr: 0.02 }, status: 'succeeded', attempts: 1 },
    ],
    best: ['e1'],
    outer: {
      iterations: [{ iteration: 1, status: 'promoted', innerLoopId: 'c/outer/i1/inner', datasetHash: 'abc', gateAccepted: true }],
      promoted: 'i1:e1@step-10',
    },
    counts: { experiments: 2, examples: 40, decisions: 2 },
    ...over,
  });

  test('the same final state: nothing to explain', () => {
    expect(unexplainedDifferences(facts(), facts())).toEqual([]);
  });

  test('a lost row, other dataset contents or another promoted model without a retry are reported', () => {
    const faulted = facts({ counts: { experiments: 2, examples: 39, decisions: 2 } });
    faulted.outer = { iterations: [{ ...facts().outer!.iterations[0], datasetHash: 'abd' }], promoted: 'i1:e0@step-10' };
    expect(unexplainedDifferences(faulted, facts())).toEqual([
      'examples: 39 rows under faults, 40 without',
      'outer iteration 1: dataset version content differs (abd vs abc)',
      'promoted i1:e0@step-10 under faults, i1:e1@step-10 without',
    ]);
  });

  test('a recorded retry explains another status or winner, never a lost row', () => {
    const faulted = facts({ best: ['e0'], counts: { experiments: 2, examples: 40, decisions: 1 } });
    faulted.experiments = [
      { ...faulted.experiments[0], attempts: 2 },
      { ...faulted.experiments[1], status: 'failed' },
    ];
    expect(unexplainedDifferences(faulted, facts())).toEqual([
      'experiment 0:1: failed under faults, succeeded without, and no retry recorded',
      'decisions: 1 rows under faults, 2 without',
    ]);
  });

  test('an experiment that failed after retries explains one public eval result fewer, and no more', () => {
    const clean = facts({ counts: { experiments: 2, eval_results: 3, decisions: 2 } });
    const faulted = facts({ counts: { experiments: 2, eval_results: 2, decisions: 2 } });
    faulted.experiments = [faulted.experiments[0], { ...faulted.experiments[1], status: 'failed', attempts: 3 }];
    expect(unexplainedDifferences(faulted, clean)).toEqual([]);
    faulted.counts.eval_results = 1;
    expect(unexplainedDifferences(faulted, clean)).toEqual([
      'eval_results: 1 rows under faults, 3 without (1 fewer explained by experiments that failed after retries)',
    ]);
  });
});

describe('a stop Flywheel decided is final', () => {
  const pruned = { status: 'pruned', lastStep: 3, error: 'pruned at step 3' };
  const run = (over: Partial<VerdictRow> = {}): VerdictRow => ({
    id: 'l/e3/r1',
    experiment_id: 'l/e3',
    attempt: 1,
    status: 'pruned',
    verdict: pruned,
    ...over,
  });

  test('a pruned run, recorded pruned, its experiment pruned: nothing to report', () => {
    expect(verdictViolations([{ id: 'l/e3', status: 'pruned' }], [run()])).toEqual([]);
  });

  test('a pruned run relaunched after a reattach that ignored its verdict is reported', () => {
    // What awaitTraining without the verdict read does: the reattached attempt finds its own kill, calls it a failure,
    // and the experiment trains r2, which the rule prunes again.
    const runs = [run({ status: 'failed' }), run({ id: 'l/e3/r2', attempt: 2 })];
    expect(verdictViolations([{ id: 'l/e3', status: 'pruned' }], runs)).toEqual([
      'run l/e3/r1: verdict pruned stored before the kill, but the run is recorded failed',
      'run l/e3/r1: pruned by verdict, yet its experiment trained again (l/e3/r2)',
    ]);
  });

  test('an experiment that ends otherwise than its last run was decided is reported; runs without a verdict are not judged', () => {
    const runs = [
      run({ id: 'l/e2/r1', experiment_id: 'l/e2', status: 'failed', verdict: null }),
      run({ id: 'l/e2/r2', experiment_id: 'l/e2', attempt: 2, status: 'succeeded', verdict: null }),
      run(),
    ];
    expect(
      verdictViolations(
        [
          { id: 'l/e2', status: 'succeeded' },
          { id: 'l/e3', status: 'failed' },
        ],
        runs,
      ),
    ).toEqual(['experiment l/e3: its last run l/e3/r1 was pruned by verdict, but the experiment ended failed']);
  });
});
