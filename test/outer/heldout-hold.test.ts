// The outer loop holds a candidate whose held-out gain outruns its public one (`promotion.heldoutOutrun: hold`): one
// real iteration whose trainer trains on leaked held-out text (the planted `heldout-train` recipe), the gate's hold
// decision, the evidence a researcher sees in `outerStatus`, a rejection by the `approvePromotion` update; and the
// history that takes the patched path ('heldout-outrun-hold'), for the replay suite.
import { eq } from 'drizzle-orm';
import { campaigns, decisions } from '../../db/schema';
import { approvePromotionUpdate, outerStatusQuery, type OuterLoopResult } from '../../contracts/outer-loop';
import { saveHistory } from '../helpers/histories';
import { eventually, loopHarness, type LoopHarness, type LoopWorkers } from '../helpers/loop-harness';
import { CHEAT_TRAIN_PARAMS, plantedCheats } from '../helpers/planted-cheats';
import { fastBuiltinSpec, uniqueName } from '../helpers/specs';

let h: LoopHarness;
let w: LoopWorkers;
const name = uniqueName('hold');
const workflowId = `${name}/outer/held`;

beforeAll(async () => {
  h = await loopHarness('heldout_hold');
  w = await h.workers('t-hold');
}, 120_000);
afterAll(() => h?.close());

test('a held-out leak is held for a researcher with the evidence, and rejected by her', async () => {
  // The suite (and its held-out text, in the leak file) is the one the campaign's prepareTask makes: same task, seed.
  const p = await plantedCheats(h.db.db, h.home, name);
  const spec = fastBuiltinSpec(name, {
    // `steps: 0` in fixed is the baseline's (untrained) model; the one experiment trains 600 steps.
    trainer: { ...p.trainer('heldout-train'), fixed: { ...CHEAT_TRAIN_PARAMS, steps: 0 } },
    searchSpace: { steps: { type: 'categorical', choices: [600] } },
    innerLoop: { budget: { experiments: 1, parallelism: 1 }, batchSize: 1, startupTrials: 0 },
    // k = 2, not the default 3: against the untrained baseline of a bootstrap iteration every item gains a lot and
    // unevenly, so σ is wide, and this small model's leak measured 2.98 σ (outrun 0.525 bits per byte, σ 0.176).
    // This test is about what a hold does; test/evals/heldout-leak.test.ts is about detecting the leak at k = 3.
    outerLoop: {
      innerBudget: { experiments: 1 },
      evalFailureSample: 0,
      minNewFeedback: 0,
      promotion: { heldoutOutrun: 'hold', heldoutOutrunSigmas: 2, timeoutSeconds: 600, onTimeout: 'promote' },
    },
  } as never);
  const handle = await h.client.workflow.start('outerLoop', {
    taskQueue: `${w.prefix}-orchestration`,
    workflowId,
    args: [{ campaignId: name, trigger: 'cli', campaignVersionId: await h.version(spec) }],
  });

  const status = await eventually(
    'the hold',
    async () => {
      const s = await handle.query(outerStatusQuery);
      return s.phase === 'awaiting-approval' ? s : undefined;
    },
    480_000,
  );
  const e = status.awaitingApproval!;
  expect(e.gate).toMatchObject({ promote: false, rule: 'heldoutOutrunsPublic' });
  expect(e.gate.reason).toMatch(
    /^held by heldoutOutrunsPublic: .*held-out bits_per_byte improves by 2\.\d+, public by 2\.\d+: held-out outruns public by .*held for a researcher's approval \(heldoutOutrun: hold\)$/,
  );
  expect(e.gate.checks.find((c) => c.rule === 'heldoutOutrunsPublic')).toMatchObject({ passed: false });
  expect(e.defaultDecision).toBe('reject'); // a hold never promotes by default, whatever onTimeout says
  const meta = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
  expect(meta.currentDetails).toContain(`Held by the gate, awaits approval: ${e.candidateCheckpointId}`);
  expect(meta.currentDetails).toMatch(/✗ heldoutOutrunsPublic: /);
  const [gate] = await h.db.db
    .select()
    .from(decisions)
    .where(eq(decisions.id, `${name}/outer/i1/gate`));
  expect(gate).toMatchObject({ kind: 'hold', accepted: false, rule: 'heldoutOutrunsPublic' });

  await handle.executeUpdate(approvePromotionUpdate, { args: [{ approve: false, by: 'carol', note: 'trained on held-out text' }] });
  const result = (await handle.result()) as OuterLoopResult;
  const it = result.iterations.at(-1)!;
  expect(it.status).toBe('rejected');
  expect(it.reason).toMatch(/^held by heldoutOutrunsPublic: .*; the promotion was rejected by carol$/);
  const [approval] = await h.db.db
    .select()
    .from(decisions)
    .where(eq(decisions.id, `${name}/outer/i1/approval`));
  expect(approval).toMatchObject({ kind: 'reject', rule: 'researcher-approval', reason: 'rejected by carol: trained on held-out text' });
  const [campaign] = await h.db.db.select().from(campaigns).where(eq(campaigns.id, name));
  expect(campaign.productionCheckpointId).toBeNull();
}, 600_000);

test('the held outer loop history is recordable for the replay suite', () => {
  // Saved as a test artefact; copied into test/histories/outer-loop-heldout-hold.json (see README).
  expect(saveHistory('outer-loop-heldout-hold', workflowId)).toBeGreaterThan(20);
});
