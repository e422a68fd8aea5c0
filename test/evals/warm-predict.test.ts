// Warm predict (trainer.warmPredict, `predict --serve`): the eval worker's servers, on the fixture trainer in its real
// sandbox. One process answers a campaign's public splits one request at a time; a server that dies, hangs or is
// cancelled fails its request and is replaced; idle servers end and leave no folder behind. Held-out and probe
// prompts never reach a warm server, in a direct call and in a durable inner loop.
import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { answerPrompts } from '../../activities/eval/answer-prompts';
import { PredictServers } from '../../activities/eval/predict-servers';
import { trainerSetupOf } from '../../activities/training/trainer-isolation';
import { PredictionsMismatchError } from '../../core/errors';
import type { PredictPrompt } from '../../core/job-contract';
import { parseSpec } from '../../tasks/task-spec';
import { experiments } from '../../db/schema';
import { scratchDir } from '../helpers/env';
import { loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { fixtureSpec, uniqueName } from '../helpers/specs';

const PROMPTS: PredictPrompt[] = Array.from({ length: 5 }, (_, i) => ({ id: `p${i}`, prompt: `prompt ${i}`, maxBytes: 8 }));

let home: string;
/** A fixture checkpoint under `home/runs`, as a trainer leaves one; `params` is what its predict reads back. */
function checkpoint(name: string, params: Record<string, unknown> = {}): string {
  const dir = path.join(home, 'runs', name, 'checkpoints');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'step-1.json');
  fs.writeFileSync(file, JSON.stringify({ step: 1, params }));
  return file;
}

function setupFor(warmPredict: boolean) {
  const base = fixtureSpec('warm', { steps: 1 });
  return trainerSetupOf(parseSpec({ ...base, trainer: { ...base.trainer, warmPredict } }), home);
}

// The pool's own scratch root: the machine-wide one (predictScratchRoot) also holds the folders of predicts that other
// test files run at the same time, and a test that counted those failed in CI.
let scratchRoot: string;
const newScratch = (before: Set<string>) => fs.readdirSync(scratchRoot).filter((d) => !before.has(d));

beforeAll(() => {
  home = scratchDir('warm-predict');
  scratchRoot = scratchDir('warm-predict-scratch');
});
afterAll(() => fs.rmSync(scratchRoot, { recursive: true, force: true }));

describe('the warm predict servers', () => {
  let pool: PredictServers;
  let scratchBefore: Set<string>;
  beforeEach(() => {
    scratchBefore = new Set(fs.readdirSync(scratchRoot));
    pool = new PredictServers({ idleMs: 300, scratchRoot });
  });
  afterEach(() => pool.close());

  test("one process answers a campaign's requests in turn; a stray stdout line is not taken for a reply", async () => {
    const setup = setupFor(true);
    for (let k = 0; k < 4; k++) {
      const answers = await pool.predict('c1', setup, checkpoint(`one-${k}`), PROMPTS);
      expect([...answers.keys()]).toEqual(PROMPTS.map((p) => p.id));
      expect([...answers.values()].every((a) => a === ' x')).toBe(true);
    }
    // The fixture prints "fixture-trainer: serving, pid …" before its first reply.
    expect(pool.started).toBe(1);
    expect(pool.requests).toBe(4);
    // Nothing of a request stays in the inbox once it is answered.
    const inboxes = fs.readdirSync(path.join(home, 'predict-inbox'));
    for (const box of inboxes) expect(fs.readdirSync(path.join(home, 'predict-inbox', box))).toEqual([]);
  });

  test('requests beyond perCampaign wait their turn; each campaign has servers of its own', async () => {
    const setup = setupFor(true);
    const ckpt = checkpoint('par');
    await Promise.all([...Array(6)].map(() => pool.predict('c1', setup, ckpt, PROMPTS)));
    expect(pool.started).toBe(2);
    await pool.predict('c2', setup, ckpt, PROMPTS);
    expect(pool.started).toBe(3);
  });

  test('a server that dies mid-request fails it with its exit; the next request gets a new server', async () => {
    const setup = setupFor(true);
    await pool.predict('c1', setup, checkpoint('before-crash'), PROMPTS);
    await expect(pool.predict('c1', setup, checkpoint('crash', { predictCrash: true }), PROMPTS)).rejects.toThrow(
      /^predict server exited with code 7/,
    );
    const answers = await pool.predict('c1', setup, checkpoint('after-crash'), PROMPTS);
    expect(answers.size).toBe(PROMPTS.length);
    expect(pool.started).toBe(2);
  });

  test('predictions that answer other prompts are the contract error a one-shot predict raises', async () => {
    const setup = setupFor(true);
    await expect(pool.predict('c1', setup, checkpoint('wrong', { wrongPredictions: true }), PROMPTS)).rejects.toBeInstanceOf(
      PredictionsMismatchError,
    );
    // The server itself answered: it serves on.
    await pool.predict('c1', setup, checkpoint('after-wrong'), PROMPTS);
    expect(pool.started).toBe(1);
  });

  test('a request past its time limit, or cancelled, kills its server; the next is answered by a new one', async () => {
    const setup = setupFor(true);
    const hang = checkpoint('hang', { predictHangMs: 30_000 });
    await expect(pool.predict('c1', setup, hang, PROMPTS, { timeoutMs: 500 })).rejects.toThrow(/killed at its time limit, 500 ms/);
    const abort = new AbortController();
    const cancelled = pool.predict('c1', setup, hang, PROMPTS, { signal: abort.signal });
    setTimeout(() => abort.abort(new Error('cancelled by the test')), 300);
    await expect(cancelled).rejects.toThrow('cancelled by the test');
    expect((await pool.predict('c1', setup, checkpoint('after-hang'), PROMPTS)).size).toBe(PROMPTS.length);
    expect(pool.started).toBe(3);
  });

  test('a trainer that cannot start fails the request with the reason and leaves no folder', async () => {
    const base = fixtureSpec('warm', { steps: 1 });
    const missing = trainerSetupOf(
      parseSpec({ ...base, trainer: { ...base.trainer, command: ['/nonexistent/trainer'], warmPredict: true } }),
      home,
    );
    await expect(pool.predict('c1', missing, checkpoint('never'), PROMPTS)).rejects.toThrow(
      'trainer program "/nonexistent/trainer" was not found',
    );
    expect(newScratch(scratchBefore)).toEqual([]);
    expect(fs.readdirSync(path.join(home, 'predict-inbox')).length).toBe(0);
  });

  test('an idle server ends and removes its inbox and scratch folders', async () => {
    await pool.predict('c1', setupFor(true), checkpoint('idle'), PROMPTS);
    expect(pool.running).toBe(1);
    expect(newScratch(scratchBefore).length).toBe(1);
    await new Promise((r) => setTimeout(r, 600));
    expect(pool.running).toBe(0);
    expect(newScratch(scratchBefore)).toEqual([]);
    expect(fs.readdirSync(path.join(home, 'predict-inbox'))).toEqual([]);
  });
});

describe('which predict answers a split', () => {
  let pool: PredictServers;
  beforeEach(() => (pool = new PredictServers()));
  afterEach(() => pool.close());
  const ask = (split: 'public' | 'heldout' | 'probe', warm: boolean) =>
    answerPrompts(
      { db: undefined as never, home, predictServers: pool },
      {
        campaignId: 'c1',
        split,
        trainer: setupFor(warm),
        checkpoint: checkpoint(`${split}-${warm}`),
        prompts: PROMPTS,
      },
    );

  test('a public split goes to the warm server of a trainer that speaks --serve', async () => {
    expect((await ask('public', true)).size).toBe(PROMPTS.length);
    expect(pool.requests).toBe(1);
  });

  test('held-out and probe prompts go to a process of their own, never to a warm server', async () => {
    expect((await ask('heldout', true)).size).toBe(PROMPTS.length);
    expect((await ask('probe', true)).size).toBe(PROMPTS.length);
    expect(pool.requests).toBe(0);
    expect(pool.started).toBe(0);
  });

  test('a trainer that does not speak --serve gets a process per split', async () => {
    await ask('public', false);
    expect(pool.started).toBe(0);
  });
});

describe('in a durable inner loop', () => {
  let harness: LoopHarness;
  beforeAll(async () => {
    harness = await loopHarness('warm-predict-loop');
  });
  afterAll(async () => {
    await harness?.close();
  });

  test("the experiments' public splits share one warm server; the winner's and the baseline's held-out do not", async () => {
    const campaignId = uniqueName('warm-loop');
    const base = fixtureSpec(campaignId, { steps: 2 }, { budget: { experiments: 3, parallelism: 1 }, batchSize: 1 });
    const workers = await harness.workers('t-warm');
    const result = await (await workers.startLoop(campaignId, { ...base, trainer: { ...base.trainer, warmPredict: true } })).result();
    expect(result.heldout.best).toBeDefined();
    expect(result.heldout.baseline).toBeDefined();
    const rows = await harness.db.db.select().from(experiments).where(eq(experiments.campaignId, campaignId));
    const searched = rows.filter((r) => !r.id.endsWith('/baseline'));
    expect(searched.map((r) => r.publicScore)).toEqual([0, 0, 0]);
    // Three public splits, one server; the two held-out scorings went elsewhere.
    expect(workers.predictServers.requests).toBe(3);
    expect(workers.predictServers.started).toBe(1);
  }, 120_000);
});
