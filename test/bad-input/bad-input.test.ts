// Malformed input at every entry point, table-driven: campaign specs and feedback files through the real CLI,
// trainer outputs that break the job contract through a real inner loop, and research-agent replies through the
// propose activity and the real `openai` client. Each gets a clear error that says what and where, and writes nothing
// partial (row counts unchanged; no checkpoint, metric or eval row from the bad part; no experiment from a bad reply).
import fs from 'node:fs';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { eq, inArray } from 'drizzle-orm';
import { AGENT_ATTEMPTS } from '../../activities/inner/agent-batch';
import { proposeExperiments } from '../../activities/inner/propose-experiments';
import type { Proposal } from '../../contracts/inner-activities';
import { AgentUnavailableError } from '../../agents/agent-errors';
import { checkpoints, evalResults, experiments, metricPoints, proposalBatches, trainingRuns } from '../../db/schema';
import type { ChatReply } from '../helpers/chat-server';
import { cliEnv, runCli } from '../helpers/cli';
import { saveHistory } from '../helpers/histories';
import { loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { proposalsReply, proposerCampaigns, type ProposerCampaigns } from '../helpers/proposer-campaigns';
import { fixtureSpec, uniqueName } from '../helpers/specs';

let h: LoopHarness;
beforeAll(async () => {
  h = await loopHarness('bad-input');
});
afterAll(() => h?.close());

const TABLES = ['campaigns', 'experiments', 'training_runs', 'feedback_events', 'dataset_versions', 'eval_results'];
async function rowCounts(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of TABLES) out[t] = (await h.db.pool.query(`SELECT count(*)::int AS n FROM ${t}`)).rows[0].n;
  return out;
}

const goodSpec = 'name: bad-spec\nsearchSpace:\n  lr: { type: float, low: 0.001, high: 0.01 }\n';
// An alias bomb: nine-fold references seven levels deep (4.8 million strings once expanded).
const aliasBomb = [
  'a: &a [x, x, x, x, x, x, x, x, x]',
  ...'bcdefg'.split('').map((k, i) => `${k}: &${k} [${Array(9).fill(`*${'abcdefg'[i]}`).join(', ')}]`),
  'name: bad-spec',
  '',
].join('\n');
const specCases: [string, string | Buffer, RegExp][] = [
  ['an unknown field', goodSpec + 'bogus: 1\n', /bogus/],
  ['a wrong type', goodSpec + 'innerLoop:\n  budget: { experiments: many }\n', /innerLoop\.budget\.experiments/],
  ['a search range upside down', 'name: bad-spec\nsearchSpace:\n  lr: { type: float, low: 0.1, high: 0.01 }\n', /searchSpace\.lr/],
  ['truncated YAML', goodSpec.slice(0, 40), /spec\.yaml|searchSpace/],
  ['an empty file', '', /spec\.yaml: empty/],
  // 5 MB of junk keys took the YAML parser's quadratic duplicate-key check 118 s: refused by size at once.
  [
    '5 MB of junk keys',
    Array.from({ length: 400_000 }, (_, i) => `k${i.toString(36)}x: 1`).join('\n'),
    /spec\.yaml: \d+ bytes, more than a campaign spec may be \(256 KiB\)/,
  ],
  ['an alias bomb', aliasBomb, /spec\.yaml: cannot parse: Excessive alias count/],
  [
    'a key that is not UTF-8',
    Buffer.concat([
      Buffer.from('name: bad-spec\nsearchSpace:\n  l'),
      Buffer.from([0xe9]),
      Buffer.from('r: { type: float, low: 0.001, high: 0.01 }\n'),
    ]),
    /spec\.yaml:3: not valid UTF-8/,
  ],
  ['a duplicate key', goodSpec + 'name: other\n', /spec\.yaml:4:1: cannot parse: duplicate key "name"/],
];

test.each(specCases)(
  'flywheel run with a campaign spec with %s: exit 2, the problem and where, nothing written or started',
  async (_what, text, where) => {
    const file = path.join(h.home, 'spec.yaml');
    fs.writeFileSync(file, text);
    const before = await rowCounts();
    const r = await runCli(cliEnv(h, uniqueName('t-bad')), ['run', file, '--id', 'bad-spec/inner/1', '--detach'], 60_000);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(where);
    // One line that starts with the file: `flywheel: FILE: …` or `flywheel: FILE:LINE[:COL]: …`.
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^flywheel: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:`)),
    ]);
    expect(await rowCounts()).toEqual(before);
    await expect(h.client.workflow.getHandle('bad-spec/inner/1').describe()).rejects.toThrow(/not found/i);
  },
);

const good = (id: string) => JSON.stringify({ id, campaignId: 'c', kind: 'accept', modelVersion: 'm', prompt: 'p', output: 'o' });
const feedbackCases: [string, string, RegExp][] = [
  ['a truncated line', `${good('f1')}\n${good('f2').slice(0, 30)}\n`, /:2: \(root\): malformed JSON/],
  ['an unknown kind', `${good('f1')}\n${good('f2').replace('"accept"', '"love"')}\n`, /:2: kind/],
  ['a rating without its number', `${good('f1')}\n${good('f2').replace('"accept"', '"rating"')}\n`, /:2: rating/],
];

test.each(feedbackCases)('flywheel feedback import with %s: exit 2 naming file and line, no event stored', async (_what, text, where) => {
  const file = path.join(h.home, 'events.jsonl');
  fs.writeFileSync(file, text);
  const before = await rowCounts();
  const r = await runCli(cliEnv(h, 'unused'), ['feedback', 'import', file], 60_000);
  expect(r.status).toBe(2);
  expect(r.stderr.split('\n')[0]).toMatch(/events\.jsonl: 1 problem, nothing imported/);
  expect(r.stderr).toMatch(where);
  expect(await rowCounts()).toEqual(before);
});

// Trainer outputs: each campaign's one experiment runs the fixture trainer broken in one way.
const trainerCases: [string, Record<string, boolean>, RegExp][] = [
  [
    'a truncated metrics.jsonl',
    { truncateMetrics: true },
    /^the trainer exited 0 but broke the job contract: \S+metrics\.jsonl ends with a truncated line \(\d+ bytes at offset \d+, no newline\)$/,
  ],
  [
    'a checkpoint whose sha256 does not match',
    { badChecksum: true },
    /^the trainer exited 0 but broke the job contract: \S+: \S+step-6\.json has sha256 [0-9a-f]{12}…, manifest says [0-9a-f]{12}…$/,
  ],
  [
    'a predictions file for the wrong items',
    { wrongPredictions: true },
    /^scoring the public split: \S+predictions\.jsonl:1: "[^"]+-other" is not one of the prompts given$/,
  ],
  // Scored by the runTraining that trained it (SCORED_WITH_TRAINING), not by a scoreCheckpoint of its own: the same verdict.
  [
    'a predictions file for the wrong items, on a warm trainer',
    { wrongPredictions: true },
    /^scoring the public split: \S+predictions\.jsonl:1: "[^"]+-other" is not one of the prompts given$/,
  ],
];

describe('trainer outputs that break the contract', () => {
  const outcomes = new Map<string, { wf: string }>();
  beforeAll(async () => {
    const workers = await h.workers('t-bad-trainer');
    try {
      await Promise.all(
        trainerCases.map(async ([what, params]) => {
          const id = uniqueName('bad-trainer');
          const spec = fixtureSpec(id, { steps: 6, ...params });
          const warm = what.endsWith('on a warm trainer') ? { trainer: { ...spec.trainer, warmTrain: true } } : {};
          const handle = await workers.startLoop(id, { ...spec, ...warm });
          await handle.result().catch(() => undefined);
          outcomes.set(what, { wf: handle.workflowId });
        }),
      );
    } finally {
      await workers.stop();
    }
  }, 300_000);

  test.each(trainerCases)(
    '%s: the experiment fails with one line that says what and where, and nothing of it is scored',
    async (what, params, message) => {
      const e0 = `${outcomes.get(what)!.wf}/e0`;
      const [exp] = await h.db.db.select().from(experiments).where(eq(experiments.id, e0));
      expect(exp.status).toBe('failed');
      expect(exp.error).not.toContain('\n');
      expect(exp.error).toMatch(message);
      expect(await h.db.db.select().from(evalResults).where(eq(evalResults.experimentId, e0))).toEqual([]);
      const runs = await h.db.db.select().from(trainingRuns).where(eq(trainingRuns.experimentId, e0));
      expect(runs.length).toBeGreaterThan(0);
      const runIds = runs.map((r) => r.id);
      const ckpts = await h.db.db.select().from(checkpoints).where(inArray(checkpoints.runId, runIds));
      // Only predictions can be wrong on a valid checkpoint; a broken run records none.
      expect(ckpts.length > 0).toBe(!!params.wrongPredictions);
      // The cut line is no metric point; the complete ones are each stored once.
      for (const runId of runIds) {
        const points = await h.db.db.select().from(metricPoints).where(eq(metricPoints.runId, runId));
        expect({ runId, steps: points.map((p) => p.step).sort((a, b) => a - b) }).toEqual({ runId, steps: [1, 2, 3, 4, 5, 6] });
      }
    },
  );

  test('the wrong-predictions experiment history is recordable for the replay suite (the score-contract-failure path)', () => {
    // Saved as a test artefact; test/histories/experiment-contract-failure.json is a copy (see README).
    expect(saveHistory('experiment-contract-failure', `${outcomes.get('a predictions file for the wrong items')!.wf}/e0`)).toBeGreaterThan(
      5,
    );
  });
});

// Research-agent replies: the proposer's model (a local Chat Completions server) answers badly, twice (the request
// and its one repair). Designed outcome: each call is recorded in agent_calls with a one-line reason, nothing of the
// bad reply becomes an experiment, and the built-in sampler proposes the whole batch.
const PLACE = { lr: 0.003, hidden: 32, context: 5, steps: 200 };
const unusableReplies: [string, ChatReply, string, RegExp][] = [
  [
    'prose instead of JSON',
    { content: 'Sure! I would try lr=0.003 with 32 hidden units.' },
    'unusable',
    /^not JSON: Sure! I would try lr=0\.003 with 32 hidden units\.$/,
  ],
  [
    'JSON without the proposals field',
    { content: JSON.stringify({ experiments: [{ params: PLACE, hypothesis: 'h' }] }) },
    'unusable',
    /^schema mismatch: proposals: .*; \(reply\): .*"experiments"/,
  ],
  ['a proposal without its hypothesis', proposalsReply([{ params: PLACE }]), 'unusable', /^schema mismatch: proposals\.0\.hypothesis: /],
  [
    'proposals of the wrong type',
    { content: JSON.stringify({ proposals: 'lr 0.003, 32 hidden' }) },
    'unusable',
    /^schema mismatch: proposals: .*array/,
  ],
  [
    'a value outside the search space',
    proposalsReply([{ params: { ...PLACE, lr: 5 }, hypothesis: 'huge lr' }]),
    'rejected',
    /^proposals\.0: lr: 5 is outside \[0\.0003, 0\.03\]$/,
  ],
  [
    'an unknown knob',
    proposalsReply([{ params: { ...PLACE, dropout: 0.5 }, hypothesis: 'extra knob' }]),
    'rejected',
    /^proposals\.0: dropout: not in the search space$/,
  ],
  [
    'a knob of the wrong type',
    proposalsReply([{ params: { ...PLACE, hidden: 'wide' }, hypothesis: 'a word' }]),
    'rejected',
    /^proposals\.0: hidden: /,
  ],
  [
    'an empty choices array',
    {
      status: 200,
      body: {
        id: 'x',
        object: 'chat.completion',
        created: 0,
        model: 'm',
        choices: [],
        usage: { prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 },
      },
    },
    'unusable',
    /^no choices in the reply$/,
  ],
  ['a refusal', { content: null, refusal: 'I cannot help with\nthat.' }, 'unusable', /^the model refused: I cannot help with that\.$/],
];

// Replies that are no chat completion at all: the call is an error and the attempt fails (retryable), writing
// nothing; the attempt that may fail last (AGENT_ATTEMPTS) hands the batch to the sampler.
const failedReplies: [string, ChatReply, RegExp][] = [
  [
    'an HTTP 500',
    { status: 500, body: { error: { message: 'upstream\nexploded' } } },
    /^proposer model "bad-input-model": HTTP 500 upstream exploded$/,
  ],
  [
    'an HTTP 200 whose body is not JSON',
    { status: 200, body: '<html>bad gateway</html>', headers: { 'content-type': 'text/html' } },
    /^proposer model "bad-input-model": the reply is not a chat completion \(no choices array\)$/,
  ],
];

describe('research-agent replies', () => {
  const MODEL = 'bad-input-model';
  let bench: ProposerCampaigns;
  beforeAll(async () => {
    bench = await proposerCampaigns(h.db.db, MODEL);
  });
  afterAll(() => bench?.close());

  const deps = () => ({ db: h.db.db, home: h.home, agentEnv: bench.env });
  // The failed attempt is the expected outcome here, not worth a warning in the test output.
  const quiet = new DefaultLogger('ERROR');
  const rowsOf = async (loop: string) => ({
    experiments: await h.db.db.select().from(experiments).where(eq(experiments.innerLoopId, loop)),
    batches: await h.db.db.select().from(proposalBatches).where(eq(proposalBatches.innerLoopId, loop)),
  });

  test.each(unusableReplies)(
    '%s: both calls recorded with a one-line reason, the sampler proposes the batch, no experiment from the reply',
    async (_what, bad, outcome, reason) => {
      const c = await bench.campaign('bad-reply', [() => bad]);
      const got = await proposeExperiments(deps(), c.input(0, 2));
      expect(bench.requestsOf(c.name)).toHaveLength(2);
      const calls = await bench.callsOf(c.name);
      expect(calls.map((x) => x.outcome)).toEqual([outcome, outcome]);
      for (const call of calls) {
        expect(call.reason).not.toContain('\n');
        expect(call.reason).toMatch(reason);
      }
      expect(got.map((p) => p.proposer)).toEqual(['tpe-startup', 'tpe-startup']);
      const rows = await rowsOf(c.loop);
      expect(rows.experiments.map((r) => r.proposer).sort()).toEqual(['tpe-startup', 'tpe-startup']);
      expect(rows.batches).toHaveLength(1);
      expect(rows.batches[0].note).toContain(`rejected: ${calls[0].reason} | repair: ${calls[1].reason}`);
      expect(rows.batches[0].note).toContain('0 of 2 from the agent');
    },
  );

  test.each(failedReplies)(
    '%s: the call is an error naming the model, the attempt fails writing nothing; the last attempt falls back to the sampler',
    async (_what, bad, message) => {
      const c = await bench.campaign('bad-http', [() => bad]);
      const attempt = (n: number): Promise<Proposal[]> =>
        new MockActivityEnvironment(
          { attempt: n, activityId: 'propose', workflowExecution: { workflowId: c.loop, runId: 'r1' } },
          { logger: quiet },
        ).run(proposeExperiments, deps(), c.input(0, 2));

      const first = await attempt(1).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(first).toBeInstanceOf(AgentUnavailableError);
      expect((first as Error).message).toMatch(message);
      expect(await rowsOf(c.loop)).toEqual({ experiments: [], batches: [] });
      const [call] = await bench.callsOf(c.name);
      expect(call).toMatchObject({ outcome: 'error', rawReply: null, reason: (first as Error).message });

      const last = await attempt(AGENT_ATTEMPTS);
      expect(last.map((p) => p.proposer)).toEqual(['tpe-startup', 'tpe-startup']);
      const rows = await rowsOf(c.loop);
      expect(rows.experiments).toHaveLength(2);
      expect(rows.batches[0].note).toContain(`no agent proposals: ${(first as Error).message}`);
      expect((await bench.callsOf(c.name)).map((x) => x.outcome)).toEqual(['error', 'error']);
    },
  );
});
