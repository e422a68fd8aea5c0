// `flywheel demo --task`: an unknown task is one line and exit 2 before anything starts; the before/after table
// lists the overall pass rate, then each category, from whatever metrics the eval results hold.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { formatBeforeAfter, pickMetrics } from '../../cli/task-demo';
import { EXAMPLE_TASK_NAMES, exampleTask } from '../../services/example-tasks';

const BIN = path.join(__dirname, '..', '..', 'bin', 'flywheel.js');

test('an unknown task is refused in one line naming the known ones, exit 2', () => {
  const r = spawnSync(process.execPath, [BIN, 'demo', '--task', 'chess'], {
    encoding: 'utf8',
    env: { ...process.env, FLYWHEEL_HOME: '/nonexistent' },
  });
  expect(r.status).toBe(2);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(r.stderr).toMatch(/unknown task "chess" \(tasks: builtin-code, arithmetic\)/);
});

test('each example task names a spec; only a task of the user path writes files', () => {
  expect(EXAMPLE_TASK_NAMES).toEqual(['builtin-code', 'arithmetic']);
  expect(exampleTask('arithmetic').writeFiles).toBeDefined();
  expect(exampleTask('builtin-code').writeFiles).toBeUndefined();
});

test('the table lists pass_rate, then each category, and leaves out every other metric', () => {
  const before = { pass_rate: 0, accuracy: 0, 'category.carry': 0, 'category.no-carry': 0, 'grader.numeric_tolerance': 0 };
  const after = { pass_rate: 0.61, 'category.carry': 0.475, 'category.no-carry': 0.75, 'category.canary': 0 };
  expect(pickMetrics(before, after)).toEqual(['pass_rate', 'category.canary', 'category.carry', 'category.no-carry']);
  const table = formatBeforeAfter('held-out:', before, after);
  expect(table).toMatch(/category\.carry\s+0\.000\s+0\.475/);
  expect(table).toMatch(/category\.canary\s+-\s+0\.000/);
  expect(table).not.toMatch(/grader\./);
});
