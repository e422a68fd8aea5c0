// The replay suite can fail: a workflow changed without patched() does not replay a committed history, the way CI
// catches such a deploy (test/replay/replay.test.ts replays the same histories against the real code).
import fs from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { QUIET_BUNDLER_LOGGER } from '../setup/workflow-bundle';

const HISTORY = path.join(__dirname, '..', 'histories', 'inner-loop.json');

test('an unguarded change to innerLoop fails replay with a nondeterminism error', async () => {
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('./fixtures/changed-workflows'),
    logger: QUIET_BUNDLER_LOGGER,
  });
  const history = historyFromJSON(JSON.parse(fs.readFileSync(HISTORY, 'utf8')));
  await expect(Worker.runReplayHistory({ workflowBundle: { code } }, history, 'inner-loop')).rejects.toThrow(
    /[Nn]ondeterminism|DeterminismViolation/,
  );
}, 120_000);
