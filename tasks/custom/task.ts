// The generic Task (core/task.ts) of a task of one's own: a dataset (`flywheel dataset add`) and an eval suite
// (`flywheel suite add`), no code. Its sources are the registered versions the campaign version pinned; its metrics
// are whatever the suite's items report (read from the database); it selects on pass_rate unless the spec says.
import { NonRetryableError } from '../../core/errors';
import type { Task } from '../../core/task';

export const customTask: Task = {
  name: 'custom',
  kind: 'custom',
  selection: { metric: 'pass_rate', mode: 'max' },
  // A charlm recipe's seed reruns (the held-out leak check's reference) run Flywheel's own trainer on the same data.
  referenceTrainer: 'builtin',
  // Items that name two or more source files pair by file; items that all name one (or none) pair one by one.
  itemClusters: 'auto',
  sources({ task }) {
    if (task.kind !== 'custom') throw new NonRetryableError(`the custom task cannot run a task of kind "${task.kind}"`);
    return Promise.resolve({ suite: { registered: task.suite }, base: { registered: task.dataset } });
  },
};
