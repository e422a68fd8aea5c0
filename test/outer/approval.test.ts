// The outer loop's approval step, made deterministic: the real outerLoop and innerLoop workflows on the
// time-skipping test server, over stub activities whose gate always promotes, so every path runs on every run (a
// researcher's approval, a rejection, and the deadline with each default). The deadline is the spec's
// `timeoutSeconds` on a workflow timer: a day, which the server skips while the test awaits the result (and which
// no answer can miss while the test polls and answers in real time).
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import { loopSettings, outerSettings } from '../../core/loop-settings';
import { parseSpec } from '../../tasks/task-spec';
import type { FinishIterationInput } from '../../contracts/outer-activities';
import { approvePromotionUpdate, outerStatusQuery, type OuterLoopResult, type PromotionEvidence } from '../../contracts/outer-loop';
import { workflowBundlePath } from '../helpers/env';
import { eventually } from '../helpers/loop-harness';
import { requires } from '../helpers/requires';
import { fastBuiltinSpec, uniqueName } from '../helpers/specs';
import { timeSkippingEnvironment } from '../helpers/time-skipping';

requires('temporal-test-server');

type OnTimeout = 'promote' | 'reject';
const DAY = 86_400;

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await timeSkippingEnvironment();
});
afterAll(async () => {
  await env?.teardown();
});

/** Stub activities for one campaign: the gate promotes; finishOuterIteration's inputs are kept for the test. */
function stubs(name: string, approval: { onTimeout: OnTimeout; timeoutSeconds: number }, finished: FinishIterationInput[]) {
  const spec = parseSpec(fastBuiltinSpec(name, { outerLoop: { promotion: { requireApproval: true, ...approval } } } as never));
  const loop = `${name}/outer/i1/inner`;
  const evidence = (i: {
    outerIterationId: string;
    candidateCheckpointId: string;
    incumbentCheckpointId: string;
    deadline: string;
    defaultDecision: OnTimeout;
  }): PromotionEvidence => ({
    ...i,
    gate: { promote: true, rule: 'heldoutImprovement', reason: 'stub: better', checks: [] },
    categoryDeltas: [],
    cost: { trainerSeconds: 1, experiments: 1 },
    configDiff: [],
  });
  const orchestration = {
    loopSettings: async () => loopSettings(spec),
    prepareTask: async () => ({ datasetVersionId: 'v0', suiteId: 's0' }),
    claimOuterIteration: async () => ({
      claimed: true,
      outerIterationId: `${name}/outer/i1`,
      iteration: 1,
      attempt: 1,
      incumbentCheckpointId: null,
      newFeedback: 0,
      campaignVersionId: `${name}@stub`,
      settings: outerSettings(spec),
    }),
    critiqueIterationFeedback: async () => ({ failures: 0, sampled: 0, counts: { withExample: 0, noSignal: 0 } }),
    buildIterationDataset: async () => ({
      versionId: 'v1',
      parentVersionId: 'v0',
      created: true,
      counts: { examples: 10 },
      lossWeights: {},
    }),
    startInnerLoop: async () => ({ experimentId: `${loop}/baseline`, index: -1, params: {}, hypothesis: 'baseline', proposer: 'baseline' }),
    proposeExperiments: async () => [],
    finishExperiment: async () => undefined,
    selectBest: async () => ({ experimentId: `${loop}/e0`, checkpointId: 'ck-candidate', publicScore: 1, params: {} }),
    finishInnerLoop: async () => undefined,
    analyzeBatch: async () => ({ analysisId: 'a', author: 'stub' }),
    // The seed reruns (promotion.noise): none to run here, so the gate's noise is the items' alone.
    planSeedReruns: async () => ({
      groupId: `${name}/noise/stub`,
      recipeOf: 'stub',
      toRun: [],
      done: [],
      maxTrainingAttempts: 1,
      trainingTimeoutSeconds: 60,
    }),
    evaluateGate: async () => ({ promote: true, rule: 'heldoutImprovement', reason: 'stub: better', meanDelta: 0.1, pValue: 0.01 }),
    promotionEvidence: async (i: Parameters<typeof evidence>[0]) => evidence(i),
    finishOuterIteration: async (i: FinishIterationInput) => {
      finished.push(i);
      return { productionCheckpointId: i.promote ? i.promote.candidateCheckpointId : null };
    },
    failOuterIteration: async () => undefined,
  };
  const training = {
    checkTrainer: async () => ({ ok: true, host: 'stub', sandbox: 'none' }),
    acquireCapacity: async () => ({ waitedSeconds: 0 }),
    releaseCapacity: async () => ({ released: true }),
    launchTraining: async (i: { experimentId: string; attempt: number }) => ({
      runId: `${i.experimentId}/r${i.attempt}`,
      handle: { backend: 'stub', runId: `${i.experimentId}/r${i.attempt}`, runDir: '/nonexistent', ref: '0' },
    }),
    awaitTraining: async (i: { runId: string }) => ({ runId: i.runId, status: 'succeeded', checkpointId: 'ck-baseline', exitCode: 0 }),
    runTraining: async (i: { experimentId: string; attempt: number }) => ({
      runId: `${i.experimentId}/r${i.attempt}`,
      status: 'succeeded',
      checkpointId: 'ck-baseline',
      exitCode: 0,
    }),
  };
  const ev = {
    scoreCheckpoint: async () => ({ metrics: { bits_per_byte: 2 } }),
    critiqueEvalFailures: async () => ({ critiqued: 0 }),
    checkContamination: async () => ({ clean: true }),
  };
  return { orchestration, training, eval: ev };
}

async function withOuterLoop(
  approval: { onTimeout: OnTimeout; timeoutSeconds: number },
  fn: (h: WorkflowHandle, finished: FinishIterationInput[]) => Promise<void>,
): Promise<void> {
  const name = uniqueName('approval');
  const prefix = uniqueName('t-approval');
  const finished: FinishIterationInput[] = [];
  const acts = stubs(name, approval, finished);
  const workers = await Promise.all(
    (['orchestration', 'training', 'eval'] as const).map((f) =>
      Worker.create({
        connection: env.nativeConnection,
        taskQueue: `${prefix}-${f}`,
        activities: acts[f],
        ...(f === 'orchestration' ? { workflowBundle: { codePath: workflowBundlePath() } } : {}),
        shutdownGraceTime: '1s',
      }),
    ),
  );
  const running = workers.map((w) => w.run());
  try {
    const h = await env.client.workflow.start('outerLoop', {
      taskQueue: `${prefix}-orchestration`,
      workflowId: `${name}/outer/${randomUUID()}`,
      args: [{ campaignId: name, trigger: 'cli', innerBudget: { experiments: 0 } }],
    });
    await fn(h, finished);
  } finally {
    for (const w of workers) w.shutdown();
    await Promise.allSettled(running);
  }
}

const awaitingApproval = (h: WorkflowHandle) =>
  eventually('the approval request', async () => {
    const s = await h.query(outerStatusQuery).catch(() => undefined);
    return s?.phase === 'awaiting-approval' ? s : undefined;
  });

test('a researcher approves: promoted, with the approval recorded', async () => {
  await withOuterLoop({ onTimeout: 'reject', timeoutSeconds: DAY }, async (h, finished) => {
    const s = await awaitingApproval(h);
    expect(s.awaitingApproval).toMatchObject({
      candidateCheckpointId: 'ck-candidate',
      incumbentCheckpointId: 'ck-baseline',
      defaultDecision: 'reject',
    });
    expect(await h.executeUpdate(approvePromotionUpdate, { args: [{ approve: true, by: 'alice', note: 'ok' }] })).toBe(
      'approved the promotion of ck-candidate',
    );
    const r = (await h.result()) as OuterLoopResult;
    expect(r.iterations[0]).toMatchObject({ status: 'promoted', productionCheckpointId: 'ck-candidate' });
    expect(finished).toHaveLength(1);
    expect(finished[0]).toMatchObject({
      promote: { candidateCheckpointId: 'ck-candidate' },
      approval: { approve: true, by: 'alice', note: 'ok', timedOut: false },
    });
  });
}, 120_000);

test('a researcher rejects: not promoted, the reason names who; a second answer is refused', async () => {
  await withOuterLoop({ onTimeout: 'promote', timeoutSeconds: DAY }, async (h, finished) => {
    await awaitingApproval(h);
    await h.executeUpdate(approvePromotionUpdate, { args: [{ approve: false, by: 'bob' }] });
    await expect(h.executeUpdate(approvePromotionUpdate, { args: [{ approve: true }] })).rejects.toMatchObject({
      cause: { message: expect.stringMatching(/no promotion awaits approval/) },
    });
    const r = (await h.result()) as OuterLoopResult;
    expect(r.iterations[0]).toMatchObject({ status: 'rejected', reason: 'the gate passed, but the promotion was rejected by bob' });
    expect(finished[0].promote).toBeUndefined();
    expect(finished[0].approval).toMatchObject({ approve: false, by: 'bob', timedOut: false });
  });
}, 120_000);

test.each([
  ['reject', 'rejected'],
  ['promote', 'promoted'],
] as const)(
  'no answer before the deadline: the default (%s) applies and is recorded as the timeout',
  async (onTimeout, status) => {
    await withOuterLoop({ onTimeout, timeoutSeconds: DAY }, async (h, finished) => {
      const r = (await h.result()) as OuterLoopResult;
      expect(r.iterations[0].status).toBe(status);
      if (onTimeout === 'reject')
        expect(r.iterations[0].reason).toBe('the gate passed, but the promotion was not approved before the deadline');
      expect(finished).toHaveLength(1);
      expect(finished[0].approval).toMatchObject({
        approve: onTimeout === 'promote',
        by: 'timeout',
        timedOut: true,
        candidateCheckpointId: 'ck-candidate',
      });
      expect(finished[0].promote !== undefined).toBe(onTimeout === 'promote');
    });
  },
  120_000,
);
