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

test('there are committed histories for every workflow type and every patched() path', () => {
  // experiment predates capacity slots (it replays through patched() === false); every inner-loop history was
  // re-recorded when innerLoop began with its trainer check (checkTrainer), so each takes today's paths:
  // experiment-capacity and inner-loop-budget take the patched paths ('capacity-slots', 'budget-stop');
  // inner-loop-analyst takes 'agent-analyst' (an analyzeBatch after each batch) as well;
  // inner-loop-contamination takes 'contamination-check', outer-loop-hacking-guard 'hacking-guard', and
  // experiment-contract-failure 'score-contract-failure' (a trainer's predictions for the wrong items), and
  // outer-loop-iteration-failure 'outer-iteration-failure' (a failed inner loop ends the attempt's row first);
  // inner-loop-early-pause takes 'early-pause' (a pause sent while the loop prepared is applied once it has state);
  // outer-loop-heldout-hold takes 'heldout-outrun-hold' (a candidate held for a researcher, who rejects it).
  expect(files.map((f) => f.replace(/\.json$/, '')).sort()).toEqual([
    'experiment',
    'experiment-capacity',
    'experiment-contract-failure',
    'inner-loop',
    'inner-loop-analyst',
    'inner-loop-budget',
    'inner-loop-contamination',
    'inner-loop-early-pause',
    'outer-loop',
    'outer-loop-hacking-guard',
    'outer-loop-heldout-hold',
    'outer-loop-iteration-failure',
  ]);
  const patchesIn = (file: string): string[] =>
    (JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8')) as { events: { markerRecordedEventAttributes?: { markerName: string; details: Record<string, { payloads: { data: string }[] }> } }[] }).events
      .flatMap((e) => (e.markerRecordedEventAttributes?.markerName === 'core_patch' ? e.markerRecordedEventAttributes.details['patch-data'].payloads : []))
      .map((p) => (JSON.parse(Buffer.from(p.data, 'base64').toString()) as { id: string }).id);
  const recorded = new Set(files.flatMap(patchesIn));
  const inCode = fs
    .readdirSync(WORKFLOWS)
    .flatMap((f) => [...fs.readFileSync(path.join(WORKFLOWS, f), 'utf8').matchAll(/patched\('([^']+)'\)/g)].map((m) => m[1]));
  expect(inCode.length).toBeGreaterThan(0);
  expect([...new Set(inCode)].filter((id) => !recorded.has(id))).toEqual([]);
});

test.each(files)('%s replays without nondeterminism', async (file) => {
  const history = historyFromJSON(JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8')));
  await Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath() } }, history, file);
});
