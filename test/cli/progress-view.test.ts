// The progress a researcher follows: results counted by outcome (not launches), bars from each running run's
// metrics, the runs not yet reporting said so, and an ETA from the loop's pace.
import { eta, type LoopSnapshot } from '../../cli/loop-progress';
import { formatSeconds, renderSnapshot } from '../../cli/progress-view';

const snap = (over: Partial<LoopSnapshot> = {}): LoopSnapshot => ({
  status: {
    phase: 'running',
    launched: 8,
    budget: 12,
    parallelism: 2,
    running: ['l/e6', 'l/e7'],
    awaitingApproval: [],
    best: { experimentId: 'l/e2', score: 3.41 },
    batchesWithoutImprovement: 0,
  },
  leaderboard: [
    {
      experimentId: 'l/e2',
      index: 2,
      params: { lr: 0.0123456, hidden: 32 },
      proposer: 'tpe',
      hypothesis: '',
      status: 'succeeded',
      score: 3.41,
    },
  ],
  running: [
    { experimentId: 'l/e6', step: 250, totalSteps: 1000, loss: 4.2, elapsedSeconds: 10 },
    { experimentId: 'l/e7', step: 0, totalSteps: 1000, elapsedSeconds: 1 },
  ],
  counts: { done: 6, byStatus: { succeeded: 5, pruned: 1 }, running: 2, queued: 4, budget: 12, meanSeconds: 40 },
  etaSeconds: 130,
  ...over,
});

test('the headline counts results by outcome with running and queued, and an ETA', () => {
  const lines = renderSnapshot(snap(), 'bits_per_byte').split('\n');
  expect(lines[0]).toBe(
    'phase running  experiments: 6 done (5 succeeded, 1 pruned), 2 running, 4 queued of 12  parallel 2  best 3.4100 (e2)  ETA 2m10s',
  );
  expect(lines[1]).toContain('[############............]  50% 6/12 results (the untrained baseline not counted)');
  // A run's bar moves with its metrics, with its own time left; one with no metric yet says so instead of "0%".
  expect(lines[2]).toBe('  e6        [######..................]  25% step 250/1000  loss 4.200  ~30s left');
  expect(lines[3]).toBe('  e7        starting (no metric yet, 1s)');
  expect(renderSnapshot(snap({ etaSeconds: undefined }), 'bits_per_byte').split('\n')[0]).toContain('ETA – (after the first result)');
});

test('the ETA: what is left of each running run plus the queued ones, over the parallel slots', () => {
  const s = snap();
  // e6 has 75% of 40 s left, e7 all of it, and four queued: (30 + 40 + 160) / 2.
  expect(eta(s.counts, s.running, 2)).toBe(115);
  expect(eta({ ...s.counts, meanSeconds: undefined }, s.running, 2)).toBeUndefined();
  expect(formatSeconds(59.6)).toBe('1m00s');
  expect(formatSeconds(3725)).toBe('1h02m');
});
