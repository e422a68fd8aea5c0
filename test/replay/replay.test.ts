// Determinism across deploys: every committed history replays against today's workflow code. A change that
// would break running executions fails here; guard such a change with `patched()` (see README).
import fs from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { workflowBundlePath } from '../helpers/env';

const DIR = path.join(__dirname, '..', 'histories');
const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.json'));

test('there are committed histories for every workflow type', () => {
  // experiment and inner-loop predate capacity slots and the cost cap (they replay through patched() === false);
  // experiment-capacity and inner-loop-budget take the patched paths ('capacity-slots', 'budget-stop');
  // inner-loop-analyst takes 'agent-analyst' (an analyzeBatch after each batch) as well.
  expect(files.map((f) => f.replace(/\.json$/, '')).sort()).toEqual(['experiment', 'experiment-capacity', 'inner-loop', 'inner-loop-analyst', 'inner-loop-budget', 'outer-loop']);
});

test.each(files)('%s replays without nondeterminism', async (file) => {
  const history = historyFromJSON(JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8')));
  await Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath() } }, history, file);
});
