// Malformed input at every entry point, table-driven: campaign specs and feedback files through the real CLI, and
// trainer outputs that break the job contract through a real inner loop. Each gets a clear error that says what and
// where, and writes nothing partial (row counts unchanged; no checkpoint, metric or eval row from the bad part).
import fs from 'node:fs';
import path from 'node:path';
import { eq, inArray } from 'drizzle-orm';
import { checkpoints, evalResults, experiments, metricPoints, trainingRuns } from '../../db/schema';
import { cliEnv, runCli } from '../helpers/cli';
import { loopHarness, type LoopHarness } from '../helpers/loop-harness';
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
const specCases: [string, string, RegExp][] = [
  ['an unknown field', goodSpec + 'bogus: 1\n', /bogus/],
  ['a wrong type', goodSpec + 'innerLoop:\n  budget: { experiments: many }\n', /innerLoop\.budget\.experiments/],
  ['a search range upside down', 'name: bad-spec\nsearchSpace:\n  lr: { type: float, low: 0.1, high: 0.01 }\n', /searchSpace\.lr/],
  ['truncated YAML', goodSpec.slice(0, 40), /spec\.yaml|searchSpace/],
  ['an empty file', '', /spec\.yaml/],
];

test.each(specCases)('flywheel run with a campaign spec with %s: exit 2, the problem and where, nothing written or started', async (_what, text, where) => {
  const file = path.join(h.home, 'spec.yaml');
  fs.writeFileSync(file, text);
  const before = await rowCounts();
  const r = await runCli(cliEnv(h, uniqueName('t-bad')), ['run', file, '--id', 'bad-spec/inner/1', '--detach'], 60_000);
  expect(r.status).toBe(2);
  expect(r.stderr).toMatch(where);
  expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  expect(await rowCounts()).toEqual(before);
  await expect(h.client.workflow.getHandle('bad-spec/inner/1').describe()).rejects.toThrow(/not found/i);
});

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
  ['a truncated metrics.jsonl', { truncateMetrics: true }, /^the trainer exited 0 but broke the job contract: \S+metrics\.jsonl ends with a truncated line \(\d+ bytes at offset \d+, no newline\)$/],
  ['a checkpoint whose sha256 does not match', { badChecksum: true }, /^the trainer exited 0 but broke the job contract: \S+: \S+step-6\.json has sha256 [0-9a-f]{12}…, manifest says [0-9a-f]{12}…$/],
  ['a predictions file for the wrong items', { wrongPredictions: true }, /^scoring the public split: \S+predictions\.jsonl:1: "[^"]+-other" is not one of the prompts given$/],
];

describe('trainer outputs that break the contract', () => {
  const outcomes = new Map<string, { wf: string }>();
  beforeAll(async () => {
    const workers = await h.workers('t-bad-trainer');
    try {
      await Promise.all(
        trainerCases.map(async ([what, params]) => {
          const id = uniqueName('bad-trainer');
          const handle = await workers.startLoop(id, fixtureSpec(id, { steps: 6, ...params }));
          await handle.result().catch(() => undefined);
          outcomes.set(what, { wf: handle.workflowId });
        }),
      );
    } finally {
      await workers.stop();
    }
  }, 300_000);

  test.each(trainerCases)('%s: the experiment fails with one line that says what and where, and nothing of it is scored', async (what, params, message) => {
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
  });
});
