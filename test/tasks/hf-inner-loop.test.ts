// The Hugging Face trainer as a campaign's trainer on a task of the user's own, taken through the commands a user
// types (`flywheel dataset add`, `suite add`, `validate`, `run`): a tiny Llama built here from a config, with a
// tokenizer trained on the task's training text only, saved as a folder and named as `params.model`. Two campaigns:
// LoRA selected on a graded metric (pass_rate), full fine-tuning selected on bits_per_byte, which Flywheel computes
// itself from the frozen safetensors (formats/hf/score_loss.py). Then the held-out isolation checks of
// test/tasks/custom-task.test.ts on this trainer: no held-out text in any workflow history, any file under
// FLYWHEEL_HOME (run directories, checkpoint folders, dataset versions) or any report; every held-out read by an
// eval-side reader. Real dev server, PostgreSQL, transformers/TRL/peft processes training on the CPU.
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { and, eq } from 'drizzle-orm';
import YAML from 'yaml';
import type { DbHandle } from '../../db/client';
import { checkpoints, evalResults, experiments, heldoutReads, innerLoops, trainingRuns } from '../../db/schema';
import type { InnerLoopResult } from '../../contracts/inner-loop';
import { HF_CAUSAL_LM_FORMAT } from '../../core/job-contract';
import { Rng } from '../../core/stream-rng';
import { sha256Folder } from '../../services/checkpoint-manifest';
import { cliEnv, runCli } from '../helpers/cli';
import { freshDatabase, scratchDir, temporalClient } from '../helpers/env';
import { hfTestPythonPath } from '../helpers/hf-python';
import { fileLeaks, filesUnder, historyLeaks, leaksIn } from '../helpers/leak-scan';
import { requires } from '../helpers/requires';
import { sandboxAvailable } from '../helpers/sandbox';
import { makeTinyHfModel } from '../helpers/tiny-hf-model';
import { uniqueName } from '../helpers/specs';
import { startTestWorkers, type TestWorkers } from '../helpers/workers';
import { launchDirOf } from '../../backends/run-dir-files';
import { exactItem } from '../helpers/exact-items';

requires('hf');

const name = uniqueName('hf-task');
const datasetName = `rev-${name}`;
const suiteName = `rev-suite-${name}`;
const home = scratchDir('hf-task-home');
const files = scratchDir('hf-task-files');

let h: DbHandle;
let dbUrl: string;
let client: Client;
let closeClient: () => Promise<void>;
let workers: TestWorkers;
let env: NodeJS.ProcessEnv;
let model: string;
const saved: Record<string, string | undefined> = {};

/**
 * The task: a word of random letters, reversed (`rev:abc=` → `cba`), three or four letters long. The words make every
 * prompt unique, so the held-out prompts are needles no other text holds by chance.
 */
const rng = Rng.derive(18, 'hf-task');
const word = () => Array.from({ length: 3 + rng.int(2) }, () => String.fromCharCode(97 + rng.int(26))).join('');
const problem = () => {
  const w = word();
  return { prompt: `rev:${w}=`, answer: [...w].reverse().join(''), category: `len-${w.length}` };
};
const many = (n: number) => Array.from({ length: n }, problem);
const train = many(300);
const publicItems = many(8);
const heldoutItems = many(8);
const publicLoss = many(6);
const heldoutLoss = many(6);

function writeTaskFiles(): { dataset: string; suite: string } {
  const dataset = path.join(files, 'train.jsonl');
  fs.writeFileSync(
    dataset,
    train.map((p) => JSON.stringify({ prompt: p.prompt, completion: `${p.answer}\n`, category: p.category })).join('\n') + '\n',
  );
  const loss = (split: 'public' | 'heldout', k: number, p: (typeof train)[number]) => ({
    id: `${split}-loss-${k}`,
    split,
    prompt: p.prompt,
    reference: `${p.answer}\n`,
    category: 'loss',
    grader: { kind: 'bits_per_byte' },
  });
  const suite = path.join(files, 'suite.yaml');
  fs.writeFileSync(
    suite,
    YAML.stringify({
      name: suiteName,
      items: [
        ...publicItems.map((p, k) => exactItem('public', k, p)),
        ...heldoutItems.map((p, k) => exactItem('heldout', k, p)),
        ...publicLoss.map((p, k) => loss('public', k, p)),
        ...heldoutLoss.map((p, k) => loss('heldout', k, p)),
      ],
    }),
  );
  return { dataset, suite };
}

beforeAll(async () => {
  // The in-process workers run the trainer and the scorer with the test set-up's hf-venv; one thread per process.
  for (const [k, v] of Object.entries({ FLYWHEEL_HF_PYTHON: hfTestPythonPath(), OMP_NUM_THREADS: '1' })) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  // The tokenizer learns the training text only: held-out prompts reach the model folder nowhere.
  model = makeTinyHfModel(path.join(files, 'tiny-llama'), { text: train.map((p) => `${p.prompt}${p.answer}\n`).join(''), vocabSize: 300 });
  let url: string;
  ({ url, handle: h } = await freshDatabase('hf_task'));
  dbUrl = url;
  const c = await temporalClient();
  client = c.client;
  closeClient = () => c.connection.close();
  workers = await startTestWorkers({ prefix: uniqueName('t-hf'), db: h.db, home });
  env = cliEnv({ dbUrl, home }, workers.prefix);
}, 180_000);

afterAll(async () => {
  await workers?.stop();
  await closeClient?.();
  await h?.close();
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

const cli = (args: string[]) => runCli(env, args, 900_000);

/** A campaign on the HF trainer: `fixed.steps: 0` is the baseline's (the untrained model); experiments search steps. */
function campaign(suffix: string, fixed: Record<string, unknown>, lrs: number[], metric: string) {
  return {
    name: `${name}-${suffix}`,
    task: { kind: 'custom', dataset: datasetName, suite: suiteName },
    trainer: {
      command: 'hf',
      fixed: { model, steps: 0, batchSize: 16, logEvery: 10, maxLength: 32, lrSchedule: 'constant', ...fixed },
      readOnlyPaths: [model],
      unsandboxed: !sandboxAvailable,
    },
    searchSpace: { lr: { type: 'categorical', choices: lrs }, steps: { type: 'categorical', choices: [60] } },
    innerLoop: {
      budget: { experiments: lrs.length, parallelism: 1 },
      batchSize: lrs.length,
      startupTrials: lrs.length,
      pruning: { rule: 'none' },
    },
    selection: { metric },
  };
}

async function runCampaign(spec: ReturnType<typeof campaign>): Promise<InnerLoopResult> {
  const specFile = path.join(files, `${spec.name}.yaml`);
  fs.writeFileSync(specFile, YAML.stringify(spec));
  const valid = await cli(['validate', specFile]);
  expect(valid.stdout + valid.stderr).toBe('ok\n');
  const run = await cli(['run', specFile, '--json']);
  expect({ status: run.status, stderr: run.status === 0 ? '' : run.stderr }).toEqual({ status: 0, stderr: '' });
  return JSON.parse(run.stdout) as InnerLoopResult;
}

async function experimentsOf(campaignId: string) {
  const rows = await h.db.select().from(experiments).where(eq(experiments.campaignId, campaignId));
  return Promise.all(
    rows.map(async (e) => {
      const [pub] = await h.db
        .select()
        .from(evalResults)
        .where(and(eq(evalResults.experimentId, e.id), eq(evalResults.split, 'public')));
      const [run] = await h.db.select().from(trainingRuns).where(eq(trainingRuns.experimentId, e.id));
      const ckpts = await h.db.select().from(checkpoints).where(eq(checkpoints.experimentId, e.id));
      return { e, pub, run, ckpts };
    }),
  );
}

const results: Record<string, InnerLoopResult> = {};

test('dataset add and suite add register the task; the suite reports bits_per_byte beside its graded metrics', async () => {
  const task = writeTaskFiles();
  const added = await cli(['dataset', 'add', datasetName, task.dataset]);
  expect(added.status).toBe(0);
  const suite = await cli(['suite', 'add', task.suite]);
  expect(suite.status).toBe(0);
  expect(suite.stdout.trim()).toBe(`${suiteName}@1`);
}, 120_000);

test('LoRA, selected on pass_rate: trained, checkpoints as merged HF folders, scored by Flywheel on both metrics', async () => {
  const spec = campaign('lora', { lora: { r: 16, alpha: 32, targetModules: 'all-linear' } }, [1e-2], 'pass_rate');
  results.lora = await runCampaign(spec);
  const rows = await experimentsOf(spec.name);
  expect(rows).toHaveLength(2); // the baseline and e0
  for (const { e, pub, run, ckpts } of rows) {
    expect(e.status).toBe('succeeded');
    expect(JSON.parse(fs.readFileSync(path.join(launchDirOf(run.runDir), 'isolation.json'), 'utf8')).sandbox).toBe(
      sandboxAvailable ? 'bubblewrap' : 'none',
    );
    expect(ckpts.length).toBeGreaterThan(0);
    for (const c of ckpts) {
      expect(c.format).toBe(HF_CAUSAL_LM_FORMAT);
      expect(fs.statSync(c.path).isDirectory()).toBe(true);
      expect(sha256Folder(c.path).sha256).toBe(c.sha256);
      // The adapter merged in: a folder from_pretrained loads alone, with no peft files.
      expect(fs.readdirSync(c.path).filter((f) => f.startsWith('adapter_'))).toEqual([]);
    }
    // The inner loop scores its experiments on public; the baseline only on held-out, beside the winner.
    if (e.proposer === 'baseline') continue;
    expect(pub.metrics.pass_rate).toBe(e.publicScore);
    expect(pub.metrics.bits_per_byte).toBeGreaterThan(0);
  }
  const trained = rows.find((r) => r.e.proposer !== 'baseline')!;
  expect(results.lora.best?.experimentId).toBe(trained.e.id);
  // Sixty LoRA steps on the task's text: Flywheel's own held-out loss of the references falls below the untrained model's.
  const { best, baseline } = results.lora.heldout;
  expect(best!.bits_per_byte).toBeLessThan(baseline!.bits_per_byte);
  expect(best!.pass_rate).toBeGreaterThanOrEqual(0);
}, 900_000);

test('full fine-tuning, selected on bits_per_byte: the lower loss wins, on the public split', async () => {
  const spec = campaign('full', {}, [3e-4, 3e-3], 'bits_per_byte');
  results.full = await runCampaign(spec);
  const rows = (await experimentsOf(spec.name)).filter((r) => r.e.proposer !== 'baseline');
  expect(rows).toHaveLength(2);
  for (const { e, pub, ckpts } of rows) {
    expect(e.status).toBe('succeeded');
    expect(e.publicScore).toBe(pub.metrics.bits_per_byte);
    for (const c of ckpts) expect(c.format).toBe(HF_CAUSAL_LM_FORMAT);
  }
  const best = rows.reduce((a, b) => (a.e.publicScore! <= b.e.publicScore! ? a : b));
  expect(results.full.best?.experimentId).toBe(best.e.id);
  expect(results.full.best?.publicScore).toBe(best.e.publicScore);
  expect(results.full.heldout.best!.bits_per_byte).toBeLessThan(results.full.heldout.baseline!.bits_per_byte);
}, 900_000);

test('held-out text reaches no workflow history, no file under FLYWHEEL_HOME and no report; only eval-side readers read it', async () => {
  expect(Object.keys(results)).toEqual(['lora', 'full']);
  for (const [k, r] of Object.entries(results))
    process.stdout.write(
      `${k}: held-out bits_per_byte ${r.heldout.baseline!.bits_per_byte.toFixed(3)} (baseline) -> ${r.heldout.best!.bits_per_byte.toFixed(3)} (best), pass_rate ${r.heldout.baseline!.pass_rate} -> ${r.heldout.best!.pass_rate}\n`,
    );
  const needles = [...heldoutItems, ...heldoutLoss].map((p) => p.prompt);
  const loops = await h.db.select({ id: innerLoops.id, campaignId: innerLoops.campaignId }).from(innerLoops);
  const ids = loops.filter((l) => l.campaignId.startsWith(name)).map((l) => l.id);
  for (const campaignId of [`${name}-lora`, `${name}-full`])
    ids.push(
      ...(await h.db.select({ id: experiments.id }).from(experiments).where(eq(experiments.campaignId, campaignId))).map((r) => r.id),
    );
  expect(ids.length).toBeGreaterThanOrEqual(7);
  const found = await historyLeaks(client, ids, needles);
  // Run directories (run.json, metrics, hf-state, checkpoint folders with their tokenizer), dataset versions.
  expect([...filesUnder(home)].some((f) => f.endsWith('tokenizer.json'))).toBe(true);
  found.push(...fileLeaks(home, needles));
  for (const args of [
    ['report', `${name}-full`, '--stdout'],
    ['status', `${name}-full`],
    ['suite', 'show', suiteName],
  ]) {
    const r = await cli(args);
    found.push(...leaksIn(`flywheel ${args.join(' ')}`, r.stdout + r.stderr, needles));
  }
  expect(found).toEqual([]);
  const readers = (await h.db.select({ reader: heldoutReads.reader }).from(heldoutReads)).map((r) => r.reader);
  expect(readers.length).toBeGreaterThan(0);
  for (const r of readers) expect(r).toMatch(/(:scoreCheckpoint$|^checkContamination:)/);
}, 300_000);
