// The median rule as the training wait applies it: every logged point judged in order against a fixed peer set,
// so the verdict and its step are the same however the points were batched when read.
import { firstPrunedStep, peerValuesAt, type PeerCurve } from '../../core/pruning';

const rule = { warmupSteps: 20, minCompleted: 3 };
const peers: PeerCurve[] = [
  [
    [10, 5],
    [20, 4],
    [30, 3],
    [40, 2.5],
  ],
  [
    [10, 5.5],
    [20, 4.2],
    [30, 3.4],
    [40, 3],
  ],
  [
    [10, 6],
    [20, 4.4],
    [30, 3.2],
  ],
];

test('peer values at a step: each curve at its largest step not after it; a curve with no point that early is left out', () => {
  expect(peerValuesAt(peers, 35)).toEqual([3, 3.4, 3.2]);
  expect(peerValuesAt(peers, 45)).toEqual([2.5, 3, 3.2]);
  expect(peerValuesAt([[[50, 1]], ...peers], 10)).toEqual([5, 5.5, 6]);
});

test('the first point worse than the median prunes, whichever chunks the points arrived in', () => {
  // Worse than the median at step 30 (3.5 > 3.2) only; better again at 40 (2.6 < 3).
  const run = [
    { step: 10, value: 9 },
    { step: 20, value: 4.1 },
    { step: 30, value: 3.5 },
    { step: 40, value: 2.6 },
  ];
  const all = firstPrunedStep(rule, run, peers);
  expect(all).toEqual({ step: 30, value: 3.5, median: 3.2, peers: 3 });
  // Read in two chunks, or one point at a time: the same verdict at the same step (the newest point alone would not prune).
  expect(firstPrunedStep(rule, run.slice(0, 2), peers) ?? firstPrunedStep(rule, run.slice(2), peers)).toEqual(all);
  expect(firstPrunedStep(rule, run.slice(3), peers)).toBeUndefined();
  // Before the warm-up step, and with fewer peers than minCompleted, nothing is pruned.
  expect(firstPrunedStep({ ...rule, warmupSteps: 35 }, run, peers)).toBeUndefined();
  expect(firstPrunedStep(rule, run, peers.slice(0, 2))).toBeUndefined();
});
