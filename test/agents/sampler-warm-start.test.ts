// The built-in sampler across a campaign's inner loops: a warm-started loop (the outer loop's) and a later manual
// loop draw from the campaign's earlier trials of the same space, so no configuration the campaign already ran is
// proposed again, the model is used from the first batch, and the hypotheses say so. Start-up labels count.
import { asc, eq } from 'drizzle-orm';
import { latestCampaignVersionId, registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import type { ActivityDeps } from '../../activities/deps';
import { proposeExperiments } from '../../activities/inner/propose-experiments';
import type { Proposal } from '../../contracts/inner-activities';
import { DEMO_SPEC } from '../../cli/commands/demo';
import { loadSpecFile } from '../../cli/spec-file';
import { paramsKey, validateParams } from '../../core/sampler';
import type { Params } from '../../core/spec';
import type { DbHandle } from '../../db/client';
import { checkpoints, experiments, innerLoops } from '../../db/schema';
import { freshDatabase, scratchDir } from '../helpers/env';
import { uniqueName } from '../helpers/specs';

const home = scratchDir('sampler-warm-start');
let h: DbHandle;
const deps = (): ActivityDeps => ({ db: h.db, home });

beforeAll(async () => {
  ({ handle: h } = await freshDatabase('sampler_warm_start'));
});
afterAll(async () => {
  await h?.close();
});

/** A smooth synthetic objective (lower is better), so TPE has something to model. */
const score = (p: Params) => (Math.log10(p.lr as number) + 2) ** 2 + (Math.log10(p.weightDecay as number) + 4) ** 2 / 10 + 3;
/** The knobs a warm-started loop still searches (the others are pinned to production's). */
const free = (p: Params) => paramsKey({ lr: p.lr, weightDecay: p.weightDecay });

async function propose(campaignId: string, loop: string, startIndex: number, count: number): Promise<Proposal[]> {
  const campaignVersionId = (await latestCampaignVersionId(h.db, campaignId))!;
  const got = await proposeExperiments(deps(), {
    campaignId,
    campaignVersionId,
    innerLoopId: loop,
    datasetVersionId: 'v',
    startIndex,
    count,
  });
  for (const p of got)
    await h.db
      .update(experiments)
      .set({ status: 'succeeded', publicScore: score(p.params) })
      .where(eq(experiments.id, p.experimentId));
  return got;
}

const rowsOf = (campaignId: string) =>
  h.db.select().from(experiments).where(eq(experiments.campaignId, campaignId)).orderBy(asc(experiments.createdAt), asc(experiments.index));

test('a warm-started loop and a later manual loop propose no configuration the campaign already tried', async () => {
  const name = uniqueName('warm-sampler');
  const spec = { ...loadSpecFile(DEMO_SPEC), name };
  await registerCampaignVersion(h.db, spec);

  // The first loop: four uniform start-up draws, numbered 1 to 4, then a model-based batch.
  const first = `${name}/inner/1`;
  const startup = await propose(name, first, 0, 4);
  expect(startup.map((p) => p.proposer)).toEqual(['tpe-startup', 'tpe-startup', 'tpe-startup', 'tpe-startup']);
  expect(startup.map((p) => /start-up trial (\d+)/.exec(p.hypothesis)?.[1])).toEqual(['1', '2', '3', '4']);
  const model = await propose(name, first, 4, 4);
  expect(model.every((p) => p.proposer === 'tpe' && p.hypothesis.startsWith('TPE after 4 finished trials'))).toBe(true);
  expect(model.every((p) => !p.hypothesis.includes('earlier trials'))).toBe(true);

  // The outer loop's next inner loop, warm-started from the first loop's best, with the model-shape knobs pinned.
  const bestRow = [...(await rowsOf(name))].sort((a, b) => a.publicScore! - b.publicScore!)[0];
  const checkpointId = `${bestRow.id}/run1/step-100`;
  await h.db.insert(checkpoints).values({
    id: checkpointId,
    runId: `${bestRow.id}/run1`,
    experimentId: bestRow.id,
    step: 100,
    path: '/nonexistent',
    sha256: 'x',
    format: 'charlm-v1',
  });
  const warm = `${name}/outer/i2/inner`;
  await h.db
    .insert(innerLoops)
    .values({ id: warm, campaignId: name, datasetVersionId: 'v', baseCheckpointId: checkpointId, status: 'running' });
  const warmBatch = await propose(name, warm, 0, 4);
  const base = bestRow.params as Params;
  for (const p of warmBatch) {
    expect(validateParams(spec.searchSpace, p.params)).toEqual([]);
    expect({ hidden: p.params.hidden, context: p.params.context, embed: p.params.embed }).toEqual({
      hidden: base.hidden,
      context: base.context,
      embed: base.embed,
    });
    // The model is fitted on the campaign's 8 finished trials at once: no start-up draws again.
    expect(p.proposer).toBe('tpe');
    expect(p.hypothesis).toContain(`warm-started from 8 earlier trials of this campaign's search space (8 finished, in 1 loop: ${first})`);
    expect(p.hypothesis).toContain(`warm start from ${checkpointId}`);
  }
  const firstFree = new Set([...startup, ...model].map((p) => free(p.params)));
  // Not even the searched knobs repeat: last loop's start-up draws are not drawn again under new pinned values.
  expect(warmBatch.filter((p) => firstFree.has(free(p.params)))).toEqual([]);

  // A manual loop afterwards does not replay the first loop's draws either.
  const manual = await propose(name, `${name}/inner/2`, 0, 4);
  expect(manual.every((p) => p.hypothesis.includes('warm-started from 12 earlier trials'))).toBe(true);

  const all = await rowsOf(name);
  const keys = all.map((r) => paramsKey(r.params as Params));
  expect(new Set(keys).size).toBe(keys.length);
  expect(all).toHaveLength(16);
});

test('trials of another search space are not carried over, and a retried proposal returns the rows it wrote', async () => {
  const name = uniqueName('warm-sampler-space');
  const spec = { ...loadSpecFile(DEMO_SPEC), name };
  await registerCampaignVersion(h.db, spec);
  // A loop of the campaign whose knobs fall outside today's space (an older spec with a wider learning rate).
  await h.db.insert(experiments).values(
    [0, 1, 2, 3].map((i) => ({
      id: `${name}/inner/old/e${i}`,
      campaignId: name,
      innerLoopId: `${name}/inner/old`,
      index: i,
      datasetVersionId: 'v',
      params: { lr: 5 + i, hidden: 32, context: 4, embed: 8, weightDecay: 0.001 },
      proposer: 'tpe',
      status: 'succeeded',
      publicScore: 4,
    })),
  );
  const loop = `${name}/inner/1`;
  const got = await propose(name, loop, 0, 2);
  expect(got.map((p) => p.proposer)).toEqual(['tpe-startup', 'tpe-startup']);
  expect(got.every((p) => !p.hypothesis.includes('earlier trials'))).toBe(true);
  expect(
    await proposeExperiments(deps(), {
      campaignId: name,
      campaignVersionId: (await latestCampaignVersionId(h.db, name))!,
      innerLoopId: loop,
      datasetVersionId: 'v',
      startIndex: 0,
      count: 2,
    }),
  ).toEqual(got);
});
