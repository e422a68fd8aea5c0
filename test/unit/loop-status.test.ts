// One status a page shows for a loop (core/loop-status.ts): the workflow's end when it ended without completing,
// whatever the database still records; else what the database records.
import { shownLoopStatus } from '../../core/loop-status';

test('a loop recorded running whose workflow failed, was terminated, cancelled or timed out shows that end', () => {
  for (const end of ['FAILED', 'TERMINATED', 'CANCELLED', 'TIMED_OUT']) expect(shownLoopStatus('running', end)).toBe(end);
  expect(shownLoopStatus('running', 'RUNNING')).toBe('running');
  // A loop stopped by its researcher completes its workflow: the recorded `stopped` says more.
  expect(shownLoopStatus('stopped', 'COMPLETED')).toBe('stopped');
  // Without Temporal, the record is all there is.
  expect(shownLoopStatus('running', undefined)).toBe('running');
});
