// A training run on a contaminated dataset is refused: the inner loop checks the version before proposing anything,
// fails with the non-retryable ContaminatedDatasetError naming the overlapping items, and launches no training job.
import { WorkflowFailedError } from '@temporalio/client';
import { and, eq, sql } from 'drizzle-orm';
import { prepareTask } from '../../activities/task/prepare-task';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { datasets, datasetVersions, evalItems, examples, experiments, heldoutReads } from '../../db/schema';
import { loopHarness, type LoopHarness, type LoopWorkers } from '../helpers/loop-harness';
import { fastBuiltinSpec, uniqueName } from '../helpers/specs';

let h: LoopHarness;
let w: LoopWorkers;
beforeAll(async () => {
  h = await loopHarness('contaminated');
  w = await h.workers('t-contam');
}, 60_000);
afterAll(() => h?.close());

test('the inner loop refuses a dataset version that copies a held-out item, before any launch', async () => {
  const name = uniqueName('contam');
  const spec = fastBuiltinSpec(name);
  const { versionId: campaignVersionId } = await registerCampaignVersion(h.db.db, spec);
  const { suiteId } = await prepareTask({ db: h.db.db, home: h.home }, { campaignVersionId });
  const [held] = await h.db.db
    .select()
    .from(evalItems)
    .where(and(eq(evalItems.suiteId, suiteId), eq(evalItems.split, 'heldout'), eq(evalItems.grader, 'bits_per_byte')))
    .limit(1);
  const versionId = `${name}/code@leaky`;
  await h.db.db
    .insert(datasets)
    .values({ id: `${name}/code`, campaignId: name, name: 'code' })
    .onConflictDoNothing();
  await h.db.db.insert(examples).values([
    { datasetVersionId: versionId, contentHash: 'clean', source: 'corpus', sourceRef: 'clean.ts', content: 'export const one = 1;\n' },
    {
      datasetVersionId: versionId,
      contentHash: 'leak',
      source: 'corpus',
      sourceRef: 'scraped.ts',
      content: `/* found online */\n${held.reference}\n`,
    },
  ]);
  await h.db.db
    .insert(datasetVersions)
    .values({ id: versionId, datasetId: `${name}/code`, path: `${h.home}/leaky`, contentHash: 'leaky', countsBySource: { corpus: 2 } });

  const handle = await w.startLoop(name, spec, { datasetVersionId: versionId });
  const err = await handle.result().catch((e: unknown) => e);
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause as { type?: string; message: string; cause?: { type?: string; message: string } };
  const failure = cause.cause ?? cause;
  expect(failure.type).toBe('ContaminatedDatasetError');
  expect(failure.message).toContain(`corpus:scraped.ts contains ${held.id} (heldout)`);
  expect(failure.message).not.toContain('clean.ts');
  // Refused once (non-retryable), before the baseline or any experiment was recorded.
  const [{ n }] = await h.db.db
    .select({ n: sql<number>`count(*)::int` })
    .from(experiments)
    .where(eq(experiments.campaignId, name));
  expect(n).toBe(0);
  const reads = await h.db.db
    .select()
    .from(heldoutReads)
    .where(eq(heldoutReads.reader, `checkContamination:${name}/inner/1`));
  expect(reads.length).toBeGreaterThan(0);
  const history = await handle.fetchHistory();
  const attempts = history
    .events!.filter((e) => e.activityTaskStartedEventAttributes)
    .map((e) => e.activityTaskStartedEventAttributes!.attempt);
  expect(attempts.every((a) => (a ?? 1) === 1)).toBe(true);
}, 120_000);
