// scoreCheckpoint cuts every output to its item's byte budget (maxBytes, at a character boundary) before anything
// sees it: the graders, the canary checks, the stored result. predict is asked for at most that much and may write
// more; what it wrote past the budget never counts, for or against it. A stand-in for the campaign's warm predict
// server answers with outputs longer than their budgets.
import { MockActivityEnvironment } from '@temporalio/testing';
import { eq } from 'drizzle-orm';
import type { ActivityDeps } from '../../activities/deps';
import type { PredictServers } from '../../activities/eval/predict-servers';
import { scoreCheckpoint } from '../../activities/eval/score-checkpoint';
import type { PredictPrompt } from '../../core/job-contract';
import type { DbHandle } from '../../db/client';
import { evalResults, experiments } from '../../db/schema';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { registerEvalSuite } from '../../services/suites/register-suite';
import { trainCheckpoint } from '../helpers/charlm-checkpoint';
import { freshDatabase, scratchDir } from '../helpers/env';
import { fixtureSpec, uniqueName } from '../helpers/specs';

const CANARY = 'canary-5f1e9a0c2b7d';
/** What predict writes for each item: its budget's worth, then more. */
const OUTPUTS: Record<string, string> = {
  // maxBytes 4: "abcd" passes; the whole answer does not.
  cut: 'abcdEFGH',
  // maxBytes 3: "€" takes three bytes and does not fit after "ab": the cut ends before it, never inside it.
  utf8: 'ab€x',
  // maxBytes 2: the canary past the budget is not the model's output.
  canary: `hi ${CANARY}`,
};

const home = scratchDir('output-budget');
const name = uniqueName('budget');
let h: DbHandle;
let suiteId: string;
let checkpointId: string;
const asked: PredictPrompt[] = [];

beforeAll(async () => {
  h = (await freshDatabase('output_budget')).handle;
  const base = fixtureSpec(name, { steps: 1 });
  const { versionId } = await registerCampaignVersion(h.db, { ...base, trainer: { ...base.trainer, warmPredict: true } } as never);
  const experimentId = `${name}/e1`;
  await h.db.insert(experiments).values({
    id: experimentId,
    campaignId: name,
    campaignVersionId: versionId,
    innerLoopId: `${name}/inner`,
    index: 1,
    datasetVersionId: 'none',
    params: {},
    proposer: 'test',
    status: 'succeeded',
  });
  checkpointId = (
    await trainCheckpoint({ dir: home, id: `${experimentId}/r1/step-1`, text: 'abc\n', seed: 1, steps: 1, db: h.db, experimentId })
  ).id;
  ({ suiteId } = await registerEvalSuite(h.db, {
    name,
    canaries: [CANARY],
    items: [
      { id: 'cut', split: 'public', prompt: 'letters: ', reference: 'abcd', grader: { kind: 'exact_match' }, maxBytes: 4 },
      { id: 'utf8', split: 'public', prompt: 'two letters: ', reference: 'ab', grader: { kind: 'exact_match' }, maxBytes: 3 },
      { id: 'canary', split: 'public', prompt: 'greet: ', reference: 'hi', grader: { kind: 'exact_match' }, maxBytes: 2 },
      // Held-out (a loss item: scored in-process, where a graded one would need a predict process of its own).
      { id: 'sealed', split: 'heldout', prompt: 'say: ', reference: 'abc', grader: { kind: 'bits_per_byte' } },
    ],
  }));
}, 60_000);
afterAll(async () => h?.close());

test('an output longer than its budget is cut before it is graded or checked for canaries', async () => {
  const predictServers = {
    predict: async (_campaign: string, _setup: unknown, _checkpoint: string, prompts: PredictPrompt[]) => {
      asked.push(...prompts);
      return new Map(prompts.map((p) => [p.id, OUTPUTS[p.id.split('/').pop()!]]));
    },
  } as unknown as PredictServers;
  const deps: ActivityDeps = { db: h.db, home, predictServers };
  await new MockActivityEnvironment().run(scoreCheckpoint, deps, {
    checkpointId,
    suiteId,
    split: 'public' as const,
    purpose: 'select' as const,
  });

  expect(Object.fromEntries(asked.map((p) => [p.id.split('/').pop(), p.maxBytes]))).toEqual({ cut: 4, utf8: 3, canary: 2 });
  asked.length = 0;
  const [row] = await h.db
    .select()
    .from(evalResults)
    .where(eq(evalResults.id, `${checkpointId}|${suiteId}|public`));
  expect(row.perItem).toEqual({ [`${suiteId}/cut`]: 1, [`${suiteId}/utf8`]: 1, [`${suiteId}/canary`]: 1 });
  expect(row.details).toMatchObject({ errors: {}, canaryHits: [] });
  // The public outputs are kept as graded (cut), for the predictions view.
  expect(row.details.outputs).toEqual({ [`${suiteId}/cut`]: 'abcd', [`${suiteId}/utf8`]: 'ab', [`${suiteId}/canary`]: 'hi' });
});

test('a held-out result keeps ids and scores only: no outputs entry at all', async () => {
  await new MockActivityEnvironment().run(scoreCheckpoint, { db: h.db, home } as ActivityDeps, {
    checkpointId,
    suiteId,
    split: 'heldout' as const,
    purpose: 'gate',
  });
  const [row] = await h.db
    .select()
    .from(evalResults)
    .where(eq(evalResults.id, `${checkpointId}|${suiteId}|heldout`));
  expect(Object.keys(row.perItem)).toEqual([`${suiteId}/sealed`]);
  expect(row.details).not.toHaveProperty('outputs');
});
