// awaitTraining's check interval: fast while a run is young (slower while the backend's end watch stands, which wakes
// the follower at the end), a fiftieth of its age later, never past a second.
import { pollDelayMs } from '../../activities/training/await-training';

test('the check interval starts at 25 ms, grows with the run to 2% of its age, and stops at 1 s', () => {
  expect(pollDelayMs(0)).toBe(25);
  expect(pollDelayMs(1_000)).toBe(25);
  expect(pollDelayMs(5_000)).toBe(100);
  expect(pollDelayMs(10_000)).toBe(200);
  expect(pollDelayMs(3_600_000)).toBe(1000);
  for (const age of [0, 100, 1_000, 5_000, 30_000]) expect(pollDelayMs(age)).toBeLessThanOrEqual(Math.max(25, age * 0.02));
});

test('while an end watch stands the check only backs it up: 250 ms at first, the same fiftieth of the age later', () => {
  expect(pollDelayMs(0, true)).toBe(250);
  expect(pollDelayMs(10_000, true)).toBe(250);
  expect(pollDelayMs(20_000, true)).toBe(400);
  expect(pollDelayMs(3_600_000, true)).toBe(1000);
  for (const age of [0, 100, 1_000, 30_000]) expect(pollDelayMs(age, true)).toBeGreaterThanOrEqual(pollDelayMs(age));
});
