// bench/lib/run-bench.ts startedList: what a bench started stops newest first, once, a failure to stop one printed
// and the rest still stopped, and the Ctrl-C handler it added is gone after.
import { startedList } from '../../bench/lib/run-bench';

it('stops newest first, once, past a failure, and removes its signal handlers', async () => {
  const before = process.listenerCount('SIGINT');
  const order: string[] = [];
  const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  const started = startedList('the test bench');
  expect(process.listenerCount('SIGINT')).toBe(before + 1);
  started.add(async () => void order.push('folder'));
  started.add(async () => {
    order.push('server');
    throw new Error('port busy\nstack line');
  });
  started.add(async () => void order.push('pool'));
  await started.stop();
  await started.stop();
  expect(order).toEqual(['pool', 'server', 'folder']);
  expect(errors.mock.calls).toEqual([['stopping the test bench: Error: port busy']]);
  expect(process.listenerCount('SIGINT')).toBe(before);
  errors.mockRestore();
});
