// A campaign's inner loop end to end on the real dev server, PostgreSQL and the built-in trainer.
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { and, eq, sql } from 'drizzle-orm';
import type { DbHandle } from '../../db/client';
import { datasetVersions, evalItems, evalResults, experiments, metricPoints, trainingRuns } from '../../db/schema';
import { findOverlaps } from '../../core/dataset/overlap';
import { leaderboardQuery, type InnerLoopResult } from '../../contracts/inner-loop';
import { saveHistory } from '../helpers/histories';
import { loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { fastBuiltinSpec, uniqueName } from '../helpers/specs';

let harness: LoopHarness;
let db: DbHandle;
let client: Client;
const campaignId = uniqueName('inner');
const workflowId = `${campaignId}/inner/1`;
let result: InnerLoopResult;

beforeAll(async () => {
  harness = await loopHarness('inner');
  ({ db, client } = harness);
  const workers = await harness.workers('t-inner');
  const handle = await workers.startLoop(
    campaignId,
    fastBuiltinSpec(campaignId, { innerLoop: { budget: { experiments: 4, parallelism: 2 } } }),
  );
  result = await handle.result();
}, 300_000);

afterAll(() => harness?.close());

test('the winner beats the untrained model on held-out', () => {
  expect(result.experiments).toBe(4);
  expect(result.best).toBeDefined();
  expect(result.heldout.best!.bits_per_byte).toBeLessThan(result.heldout.baseline!.bits_per_byte - 0.5);
  expect(result.heldout.best!.exact_match).toBeGreaterThanOrEqual(result.heldout.baseline!.exact_match);
});

test('held-out is scored only for the winner and the baseline', async () => {
  const rows = await db.db.select().from(evalResults).where(eq(evalResults.split, 'heldout'));
  const scored = rows.map((r) => r.experimentId).sort();
  expect(scored).toEqual([result.best!.experimentId, `${workflowId}/baseline`].sort());
  const publicRows = await db.db.select().from(evalResults).where(eq(evalResults.split, 'public'));
  expect(publicRows.map((r) => r.experimentId).sort()).toEqual([0, 1, 2, 3].map((i) => `${workflowId}/e${i}`).sort());
});

test('the winner is the best public score, and the leaderboard query agrees with the database', async () => {
  const rows = await db.db
    .select()
    .from(experiments)
    .where(and(eq(experiments.innerLoopId, workflowId), eq(experiments.status, 'succeeded')));
  const trials = rows.filter((r) => r.proposer !== 'baseline');
  const bestRow = trials.reduce((a, b) => (a.publicScore! <= b.publicScore! ? a : b));
  expect(result.best!.experimentId).toBe(bestRow.id);
  const board = await client.workflow.getHandle(workflowId).query(leaderboardQuery);
  expect(board[0].experimentId).toBe(bestRow.id);
  expect(board[0].score).toBeCloseTo(bestRow.publicScore!, 10);
});

test('every metric line is stored exactly once', async () => {
  const runs = await db.db
    .select()
    .from(trainingRuns)
    .where(sql`${trainingRuns.experimentId} LIKE ${workflowId + '/%'}`);
  expect(runs.length).toBe(5);
  for (const run of runs) {
    const lines = fs.readFileSync(path.join(run.runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').filter(Boolean);
    const expected = lines.reduce(
      (n, l) => n + Object.entries(JSON.parse(l)).filter(([k, v]) => k !== 'step' && typeof v === 'number').length,
      0,
    );
    const [{ n }] = await db.db
      .select({ n: sql<number>`count(*)::int` })
      .from(metricPoints)
      .where(eq(metricPoints.runId, run.id));
    expect(n).toBe(expected);
    expect(run.launches).toBe(1);
  }
});

test('no eval item is (nearly) copied in the training text the trainers read', async () => {
  const [version] = await db.db.select().from(datasetVersions);
  const train = fs.readFileSync(path.join(version.path, 'train.txt'), 'utf8');
  const items = await db.db.select().from(evalItems);
  expect(items.filter((i) => i.split === 'heldout').length).toBeGreaterThan(20);
  const overlaps = findOverlaps(
    [{ key: 'train', text: train }],
    items.map((i) => ({ id: i.id, text: i.prompt + i.reference })),
  );
  expect(overlaps).toEqual([]);
});

test('search attributes are set for filtering in the Temporal UI', async () => {
  const desc = await client.workflow.getHandle(workflowId).describe();
  expect(desc.searchAttributes.CampaignId).toEqual([campaignId]);
  expect(desc.searchAttributes.LoopKind).toEqual(['inner']);
});

test('histories are recordable for the replay suite', async () => {
  // Saved as test artefacts, copied into test/histories/ after a deliberate, compatible change (see README).
  for (const [name, id] of [
    ['inner-loop', workflowId],
    ['experiment', `${workflowId}/e0`],
  ] as const) {
    expect(saveHistory(name, id)).toBeGreaterThan(5);
  }
});
