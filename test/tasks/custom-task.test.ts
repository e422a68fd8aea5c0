// A task of the user's own, made here from files (neither the built-in task nor arithmetic), taken through the
// commands a user types: `flywheel dataset add`, `flywheel suite add`, `flywheel run`, `flywheel outer` (two
// iterations: the second's critiques from a model teacher on a local OpenAI-compatible server). Then the isolation checks of
// the built-in task, run on this one: no held-out text in any workflow history, any agent prompt, any file a
// trainer could read (run directories, dataset versions) or any report; every held-out read by an eval-side reader.
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { eq } from 'drizzle-orm';
import YAML from 'yaml';
import type { DbHandle } from '../../db/client';
import { datasetVersions, evalResults, experiments, heldoutReads, innerLoops, outerIterations } from '../../db/schema';
import { Rng } from '../../core/stream-rng';
import { failureOf, startChatServer, type ChatServer } from '../helpers/chat-server';
import { cliEnv, runCli } from '../helpers/cli';
import { freshDatabase, scratchDir, temporalClient } from '../helpers/env';
import { fileLeaks, historyLeaks, leaksIn } from '../helpers/leak-scan';
import { uniqueName } from '../helpers/specs';
import { startTestWorkers, type TestWorkers } from '../helpers/workers';
import { exactItem } from '../helpers/exact-items';

const name = uniqueName('own-task');
const datasetName = `last-${name}`;
const suiteName = `last-suite-${name}`;
const home = scratchDir('custom-task-home');
const files = scratchDir('custom-task-files');

let h: DbHandle;
let dbUrl: string;
let client: Client;
let closeClient: () => Promise<void>;
let workers: TestWorkers;
let server: ChatServer;
let env: NodeJS.ProcessEnv;

/**
 * The task: the last letter of a word of random letters (`last-short`: 5 letters, `last-long`: 9), a copy at a fixed
 * distance that the built-in model learns in a few hundred steps, and the first letter of a 9-letter word
 * (`first-long`), beyond the context the search space allows: production keeps failing those, so the teacher has
 * public failures to critique. The words make every prompt unique: the held-out prompts are needles no other text
 * holds by chance.
 */
const rng = Rng.derive(17, 'custom-task');
const word = (n: number) => Array.from({ length: n }, () => String.fromCharCode(97 + rng.int(26))).join('');
const CATEGORIES = ['last-short', 'last-long', 'first-long'] as const;
const problem = (category: (typeof CATEGORIES)[number]) => {
  const w = word(category === 'last-short' ? 5 : 9);
  return category === 'first-long'
    ? { prompt: `first:${w}=`, answer: w[0], category }
    : { prompt: `last:${w}=`, answer: w[w.length - 1], category };
};
const both = (n: number) => Array.from({ length: n }, (_, k) => problem(CATEGORIES[k % CATEGORIES.length]));

const train = both(400);
const publicItems = both(21);
const heldoutItems = both(21);

function writeTaskFiles(): { dataset: string; suite: string } {
  const dataset = path.join(files, 'train.jsonl');
  fs.writeFileSync(
    dataset,
    train
      .map((p, k) =>
        // Both line shapes a dataset may hold.
        JSON.stringify(
          k % 5 === 0
            ? {
                messages: [
                  { role: 'user', content: p.prompt },
                  { role: 'assistant', content: `${p.answer}\n` },
                ],
                category: p.category,
              }
            : { prompt: p.prompt, completion: `${p.answer}\n`, category: p.category },
        ),
      )
      .join('\n') + '\n',
  );
  const suite = path.join(files, 'suite.yaml');
  fs.writeFileSync(
    suite,
    YAML.stringify({
      name: suiteName,
      items: [
        ...publicItems.map((p, k) => exactItem('public', k, p)),
        ...heldoutItems.map((p, k) => exactItem('heldout', k, p)),
        // A perturbed twin of a public item: the same shape, other letters.
        { ...exactItem('public', 0, problem('last-short')), id: 'twin-0', split: 'probe', probe: { kind: 'perturbed', of: 'public-0' } },
      ],
    }),
  );
  return { dataset, suite };
}

beforeAll(async () => {
  let url: string;
  ({ url, handle: h } = await freshDatabase('custom_task'));
  dbUrl = url;
  const c = await temporalClient();
  client = c.client;
  closeClient = () => c.connection.close();
  server = await startChatServer((req) => ({
    content: JSON.stringify({ critique: 'That is not the last letter.', target: failureOf(req).reference, weight: 1 }),
  }));
  const agentEnv = { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseUrl };
  workers = await startTestWorkers({ prefix: uniqueName('t-own'), db: h.db, home, agentEnv });
  env = cliEnv({ dbUrl, home }, workers.prefix);
}, 60_000);
afterAll(async () => {
  await workers?.stop();
  await closeClient?.();
  await server?.close();
  await h?.close();
});

const cli = (args: string[]) => runCli(env, args, 600_000);

test('dataset add, suite add, run, outer iterations; held-out text reaches no trainer, agent or report', async () => {
  const task = writeTaskFiles();
  const added = await cli(['dataset', 'add', datasetName, task.dataset]);
  expect(added.stderr).toBe('');
  expect(added.status).toBe(0);
  expect(added.stdout.trim()).toMatch(new RegExp(`^${datasetName}@[0-9a-f]{12}$`));
  const datasetVersion = added.stdout.trim();

  const suite = await cli(['suite', 'add', task.suite]);
  expect(suite.status).toBe(0);
  expect(suite.stdout.trim()).toBe(`${suiteName}@1`);

  const spec = {
    name,
    goal: 'the last letter of a word',
    // Bare names: pinned to the versions just registered when the campaign version is.
    task: { kind: 'custom', dataset: datasetName, suite: suiteName },
    trainer: { command: 'builtin', fixed: { logEvery: 20 } },
    searchSpace: {
      lr: { type: 'float', low: 0.01, high: 0.05, log: true },
      hidden: { type: 'int', low: 32, high: 64 },
      context: { type: 'int', low: 3, high: 6 },
      steps: { type: 'int', low: 300, high: 500 },
    },
    innerLoop: { budget: { experiments: 2, parallelism: 2 }, batchSize: 2, startupTrials: 2, pruning: { rule: 'none' } },
    selection: { metric: 'pass_rate' },
    outerLoop: {
      innerBudget: { experiments: 2 },
      evalFailureSample: 5,
      minNewFeedback: 0,
      teacher: { model: 'teacher-1' },
      promotion: { metric: 'pass_rate', margin: 0 },
    },
  };
  const specFile = path.join(files, 'campaign.yaml');
  fs.writeFileSync(specFile, YAML.stringify(spec));

  const run = await cli(['run', specFile, '--json']);
  expect(run.status).toBe(0);
  // The summary prints held-out before/after for the metric the campaign selects on (it printed only its heading).
  const status = await cli(['status', name]);
  expect(status.status).toBe(0);
  expect(status.stdout).toMatch(/held-out \(untrained → winner\):\n {2}pass_rate +\d\.\d{4} → \d\.\d{4} {2}\((better|not better)\)/);
  const [loop] = await h.db.select().from(innerLoops).where(eq(innerLoops.campaignId, name));
  expect(loop.datasetVersionId).toBe(datasetVersion);
  const scored = await h.db.select().from(experiments).where(eq(experiments.campaignId, name));
  expect(scored.filter((e) => e.publicScore !== null).length).toBeGreaterThanOrEqual(2);
  // The suite's metrics, not the built-in task's: pass rate overall, per category and per grader kind.
  const [result] = await h.db.select().from(evalResults).where(eq(evalResults.experimentId, scored[0].id));
  expect(Object.keys(result.metrics)).toEqual(
    expect.arrayContaining(['pass_rate', 'category.last-short', 'category.first-long', 'grader.exact_match']),
  );
  expect(result.metrics).not.toHaveProperty('bits_per_byte');

  // The first iteration has no production model yet: it promotes its winner over the baseline; the second critiques
  // production's public failures through the teacher.
  const outer = await cli(['outer', name, '--iterations', '2', '--json']);
  expect(outer.status).toBe(0);
  const iterations = await h.db
    .select()
    .from(outerIterations)
    .where(eq(outerIterations.campaignId, name))
    .orderBy(outerIterations.createdAt);
  expect(iterations).toHaveLength(2);
  for (const it of iterations) expect(it.status).toMatch(/^(promoted|rejected)$/);
  // The iteration's dataset version builds on the user's base version, in the campaign's own dataset.
  const [derived] = await h.db.select().from(datasetVersions).where(eq(datasetVersions.id, iterations[0].datasetVersionId!));
  expect(derived.parentIds).toEqual([datasetVersion]);
  expect(derived.datasetId).toBe(`${name}/${datasetName}`);
  expect(server.requests.length).toBeGreaterThan(0); // the teacher was asked about production's public failures

  // Isolation. Needles: every held-out prompt (random letters: no other text holds them by chance).
  const needles = heldoutItems.map((p) => p.prompt);
  const ids = [
    ...(await h.db.select({ id: innerLoops.id }).from(innerLoops).where(eq(innerLoops.campaignId, name))).map((r) => r.id),
    ...scored.map((r) => r.id),
    ...(await h.db.select({ id: experiments.id }).from(experiments).where(eq(experiments.campaignId, name))).map((r) => r.id),
    ...iterations.map((i) => i.workflowId),
  ];
  const leaks = (where: string, text: string) => leaksIn(where, text, needles);
  const found = await historyLeaks(client, ids, needles);
  found.push(...leaks('agent prompts', JSON.stringify(server.requests.map((r) => r.body.messages))));
  // Every file under the home: run directories (run.json, metrics, checkpoints, predict's prompts), dataset versions.
  found.push(...fileLeaks(home, needles));
  for (const args of [
    ['report', name, '--stdout'],
    ['status', name],
    ['suite', 'show', suiteName],
    ['dataset', 'show', datasetName],
  ]) {
    const r = await cli(args);
    found.push(...leaks(`flywheel ${args.join(' ')}`, r.stdout + r.stderr));
  }
  expect(found).toEqual([]);
  // report --stdout omits its plots but never says there is no data where there is (issue 36).
  const stdoutReport = (await cli(['report', name, '--stdout'])).stdout;
  expect(stdoutReport).not.toContain('No training metrics recorded.');
  expect(stdoutReport).toMatch(/Plot of training curves \(\S+\) of the best \d+ omitted on stdout/);

  const readers = (await h.db.select({ reader: heldoutReads.reader }).from(heldoutReads)).map((r) => r.reader);
  expect(readers.length).toBeGreaterThan(0);
  for (const r of readers) expect(r).toMatch(/(:scoreCheckpoint$|^checkContamination:|^evaluateGate:|^promotionEvidence:)/);
}, 900_000);
