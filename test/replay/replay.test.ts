// Determinism across deploys: every committed history replays against today's workflow code. A change that
// would break running executions fails here; guard such a change with `patched()` (see README).
import fs from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { workflowBundlePath } from '../helpers/env';

const DIR = path.join(__dirname, '..', 'histories');
const WORKFLOWS = path.join(__dirname, '..', '..', 'workflows');
const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.json'));

test('every patched() path in the workflow code has a committed history that takes it', () => {
  // v0.1.0 folded every earlier patch in and re-recorded the histories below with that code; each change to a workflow
  // since goes behind patched('<id>'), and a history recorded on the patched path is added here (docs/operations.md).
  expect(files.length).toBeGreaterThan(0);
  const patchesIn = (file: string): string[] =>
    (
      JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8')) as {
        events: { markerRecordedEventAttributes?: { markerName: string; details: Record<string, { payloads: { data: string }[] }> } }[];
      }
    ).events
      .flatMap((e) =>
        e.markerRecordedEventAttributes?.markerName === 'core_patch' ? e.markerRecordedEventAttributes.details['patch-data'].payloads : [],
      )
      .map((p) => (JSON.parse(Buffer.from(p.data, 'base64').toString()) as { id: string }).id);
  const recorded = new Set(files.flatMap(patchesIn));
  const inCode = fs
    .readdirSync(WORKFLOWS)
    .flatMap((f) => [...fs.readFileSync(path.join(WORKFLOWS, f), 'utf8').matchAll(/patched\('([^']+)'\)/g)].map((m) => m[1]));
  expect([...new Set(inCode)].filter((id) => !recorded.has(id))).toEqual([]);
});

test.each(files)('%s replays without nondeterminism', async (file) => {
  const history = historyFromJSON(JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8')));
  await Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath() } }, history, file);
});
