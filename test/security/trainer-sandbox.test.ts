// The trust boundary around a user's trainer, on the real stack: a planted cheat (test/fixtures/snoop-trainer.js)
// runs as a campaign's trainer on the local backend, reads everything it can reach (FLYWHEEL_HOME found from its
// run.json, the folders it is allowed to read, /tmp, /proc, `..` paths and symlinks out of its run directory), prints
// its environment and tries the database's and Temporal's ports. Sandboxed, it finds no held-out or probe text, no
// credential and no secret. The same cheat in a campaign that sets `trainer.unsandboxed` finds them: the checks
// below can fail, and do, without the sandbox.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { eq, inArray } from 'drizzle-orm';
import { builtinCorpusSourceDirs } from '../../tasks/builtin-code/corpus';
import { runPredict } from '../../activities/eval/run-predict';
import { PredictServers } from '../../activities/eval/predict-servers';
import { predictScratchRoot } from '../../services/paths';
import { trainerSetupOf } from '../../activities/training/trainer-isolation';
import { REPO } from '../../activities/training/trainer-command';
import { type CampaignSpecInput } from '../../core/spec';
import { parseSpec } from '../../tasks/task-spec';
import { datasetVersions, evalItems, evalResults, evalSuites, experiments, trainingRuns } from '../../db/schema';
import { loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { temporalAddress } from '../helpers/env';
import { requires } from '../helpers/requires';
import { uniqueName } from '../helpers/specs';

requires('bubblewrap');

const SNOOP = path.join(__dirname, '..', 'fixtures', 'snoop-trainer.js');
const secret = (label: string) => `${label}-${crypto.randomBytes(12).toString('hex')}`;
const URL_PASSWORD = secret('urlpw');
/**
 * Set in the worker's environment (this process, whose trainers are launched from it) and in that of a long-lived
 * process beside it (as `flywheel up` and its workers are), whose /proc/<pid>/environ a trainer could read.
 */
const SECRETS = {
  FLYWHEEL_API_TOKEN: secret('tok'),
  OPENAI_API_KEY: secret('sk'),
  PGPASSWORD: secret('pgpw'),
  TEMPORAL_TLS_KEY: secret('tls'),
  /** A URL with a password, under a name on no list. */
  MIRROR_URL: `https://user:${URL_PASSWORD}@mirror.invalid/simple`,
};
const FILE_SECRET = secret('stackfile');

let harness: LoopHarness;
let neighbour: ChildProcess | undefined;
/** Every folder this file's own code made with fs.mkdtempSync (its workers run in this process): the scratch its predicts made. */
const made: string[] = [];
let mkdtemp: jest.SpyInstance | undefined;
let world: string;
/** Distinctive windows of held-out and probe text: in no training text and no public item. */
let heldoutWindows: string[];
const found: Record<'sandboxed' | 'unsandboxed', string[]> = { sandboxed: [], unsandboxed: [] };
const predictFound: Record<'sandboxed' | 'unsandboxed', string> = { sandboxed: '', unsandboxed: '' };
/** Two requests to one warm `predict --serve` of the cheat (trainer.warmPredict), and how many servers answered them. */
const warmFound: Record<'sandboxed' | 'unsandboxed', { answers: string[]; servers: number }> = {
  sandboxed: { answers: [], servers: 0 },
  unsandboxed: { answers: [], servers: 0 },
};
const previous: Record<string, string | undefined> = {};

function snoopSpec(name: string, unsandboxed: boolean): CampaignSpecInput {
  return {
    name,
    task: { kind: 'builtin-code', completionItems: 10, lossItems: 5 },
    trainer: {
      command: [process.execPath, SNOOP],
      // The cheat may read the whole checkout: the sandbox must still hide the task's eval sources inside it (the
      // corpus under node_modules). A folder that holds FLYWHEEL_HOME is refused before the loop starts
      // (test/redteam/folder-harvest.test.ts); the cheat still looks there.
      readOnlyPaths: [REPO],
      unsandboxed,
      fixed: { snoopRoots: [REPO, world, ...builtinCorpusSourceDirs(path.join(REPO, 'node_modules'))], snoopPorts: ports() },
    },
    searchSpace: { lr: { type: 'categorical', choices: [0.01] } },
    selection: { metric: 'exact_match', mode: 'max' },
    innerLoop: { budget: { experiments: 1, parallelism: 1 }, batchSize: 1, startupTrials: 0, pruning: { rule: 'none' } },
  } as CampaignSpecInput;
}

/** The database's and Temporal's ports, which a sandboxed trainer must not reach. */
function ports(): number[] {
  return [new URL(harness.dbUrl).port, temporalAddress().split(':').pop()].map(Number);
}

/** 40-byte windows of every held-out and probe item that occur in no training text and no public item. */
async function distinctiveHeldoutWindows(campaignId: string): Promise<string[]> {
  const { db } = harness.db;
  const [exp] = await db.select().from(experiments).where(eq(experiments.campaignId, campaignId)).limit(1);
  const [version] = await db.select().from(datasetVersions).where(eq(datasetVersions.id, exp.datasetVersionId));
  const train = fs.readFileSync(path.join(version.path, 'train.txt'), 'utf8');
  const [suite] = await db.select({ id: evalSuites.id }).from(evalSuites).limit(1);
  const items = await db.select().from(evalItems).where(eq(evalItems.suiteId, suite.id));
  const publicText = items
    .filter((i) => i.split === 'public')
    .map((i) => i.prompt + i.reference)
    .join('\n');
  const windows: string[] = [];
  for (const i of items.filter((x) => x.split !== 'public')) {
    const text = i.prompt + i.reference;
    for (let at = Math.floor(text.length / 2); at + 40 <= text.length && at < text.length / 2 + 400; at += 40) {
      const w = text.slice(at, at + 40);
      if (/\S{6,}/.test(w) && !train.includes(w) && !publicText.includes(w)) {
        windows.push(w);
        break;
      }
    }
  }
  return windows;
}

async function runSnoop(mode: 'sandboxed' | 'unsandboxed'): Promise<void> {
  const campaignId = uniqueName(`snoop-${mode}`);
  const workers = await harness.workers(`t-snoop-${mode}`);
  const handle = await workers.startLoop(campaignId, snoopSpec(campaignId, mode === 'unsandboxed'));
  await handle.result();
  const runs = await harness.db.db
    .select()
    .from(trainingRuns)
    .where(
      inArray(
        trainingRuns.experimentId,
        (await harness.db.db.select({ id: experiments.id }).from(experiments).where(eq(experiments.campaignId, campaignId))).map(
          (e) => e.id,
        ),
      ),
    );
  for (const r of runs) found[mode].push(fs.readFileSync(path.join(r.runDir, 'snoop.txt'), 'latin1'));
  heldoutWindows ??= await distinctiveHeldoutWindows(campaignId);
  // predict, on the campaign's own checkpoint, answering public prompts: what it found rides out in its answer.
  const [run] = runs;
  const spec = parseSpec(snoopSpec(campaignId, mode === 'unsandboxed'));
  const [item] = await harness.db.db.select().from(evalItems).where(eq(evalItems.split, 'public')).limit(1);
  const answers = await runPredict({
    trainer: trainerSetupOf(spec, harness.home),
    checkpointFile: path.join(run.runDir, 'checkpoints', 'step-1.json'),
    prompts: [{ id: item.id, prompt: item.prompt, maxBytes: 8 }],
  });
  predictFound[mode] = answers.get(item.id)!;
  // The same cheat as a warm server: it lives across requests, so each request finds what that server can reach.
  const servers = new PredictServers();
  try {
    const warm = parseSpec({
      ...snoopSpec(campaignId, mode === 'unsandboxed'),
      trainer: { ...snoopSpec(campaignId, mode === 'unsandboxed').trainer, warmPredict: true },
    });
    for (let k = 0; k < 2; k++) {
      const a = await servers.predict(campaignId, trainerSetupOf(warm, harness.home), path.join(run.runDir, 'checkpoints', 'step-1.json'), [
        { id: item.id, prompt: item.prompt, maxBytes: 8 },
      ]);
      warmFound[mode].answers.push(a.get(item.id)!);
    }
    warmFound[mode].servers = servers.started;
  } finally {
    servers.close();
  }
}

function leaks(text: string): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(SECRETS)) if (text.includes(name === 'MIRROR_URL' ? URL_PASSWORD : value)) out.push(name);
  if (text.includes(FILE_SECRET)) out.push('stack.json');
  const held = heldoutWindows.filter((w) => text.includes(w));
  if (held.length > 0) out.push(`${held.length} held-out/probe windows`);
  return out;
}

describe('a trainer in the sandbox', () => {
  beforeAll(async () => {
    world = fs.mkdtempSync(path.join('/tmp', 'sandbox-world-'));
    // The predict scratch root is the machine's: earlier killed runs and other test files' predicts (jest runs two files
    // at once) leave and make folders in it. Ours are the ones this process makes, recorded as they are made.
    const real = fs.mkdtempSync.bind(fs) as (...args: unknown[]) => string;
    mkdtemp = jest.spyOn(fs, 'mkdtempSync').mockImplementation(((...args: unknown[]) => {
      const dir = real(...args);
      made.push(dir);
      return dir;
    }) as unknown as typeof fs.mkdtempSync);
    const scratch = process.env.FLYWHEEL_TEST_SCRATCH;
    process.env.FLYWHEEL_TEST_SCRATCH = world;
    harness = await loopHarness('sandbox-home');
    if (scratch === undefined) delete process.env.FLYWHEEL_TEST_SCRATCH;
    else process.env.FLYWHEEL_TEST_SCRATCH = scratch;
    for (const [k, v] of Object.entries(SECRETS)) {
      previous[k] = process.env[k];
      process.env[k] = v;
    }
    neighbour = spawn('sleep', ['600'], { env: { PATH: process.env.PATH, ...SECRETS }, stdio: 'ignore' });
    fs.writeFileSync(
      path.join(harness.home, 'stack.json'),
      JSON.stringify({ postgres: { url: `postgres://flywheel:${FILE_SECRET}@127.0.0.1/db` } }),
      { mode: 0o600 },
    );
    await runSnoop('sandboxed');
    await runSnoop('unsandboxed');
  }, 300_000);

  afterAll(async () => {
    mkdtemp?.mockRestore();
    neighbour?.kill('SIGKILL');
    for (const [k, v] of Object.entries(previous)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await harness?.close();
    if (world) fs.rmSync(world, { recursive: true, force: true });
  });

  test('the cheat ran and read what it may: its run.json and its dataset version', () => {
    expect(found.sandboxed.length).toBeGreaterThanOrEqual(2); // the baseline and e0
    for (const text of found.sandboxed) {
      expect(text).toContain('"runId"');
      expect(text).toMatch(/== \S+\/train\.txt/);
    }
    expect(heldoutWindows.length).toBeGreaterThan(5);
  });

  test('sandboxed, train finds no held-out or probe text, no credential and no secret', () => {
    for (const text of found.sandboxed) expect(leaks(text)).toEqual([]);
  });

  test('sandboxed, train sees only allow-listed environment variables and reaches neither PostgreSQL nor Temporal', () => {
    for (const text of found.sandboxed) {
      const env = text.split('== environment\n')[1].split('\n== ')[0];
      const names = env.split('\n').map((l) => l.split('=')[0]);
      for (const n of names)
        expect(n).toMatch(
          /^(PATH|PWD|HOME|TMPDIR|LANG|LANGUAGE|TZ|LC_\w+|OMP_NUM_THREADS|MKL_NUM_THREADS|OPENBLAS_\w+|FLYWHEEL_TORCH_THREADS|CUDA_\w+|NVIDIA_\w+|NCCL_\w+)$/,
        );
      const network = text.split('== network\n')[1].split('\n== ')[0];
      expect(network).not.toContain('connected');
      expect(network.split('\n').filter(Boolean).length).toBe(ports().length);
    }
  });

  test('sandboxed, predict finds no secret and no held-out text', () => {
    expect(predictFound.sandboxed).toContain('== environment');
    expect(leaks(predictFound.sandboxed)).toEqual([]);
  });

  test('sandboxed, a warm predict server finds no secret and no held-out text, and cannot open its checkpoint for writing', () => {
    const { answers, servers } = warmFound.sandboxed;
    expect(servers).toBe(1);
    expect(answers).toHaveLength(2);
    const pid = (text: string) => text.split('== pid\n')[1].split('\n')[0];
    expect(pid(answers[1])).toBe(pid(answers[0])); // one process answered both
    for (const text of answers) {
      expect(text).toContain('== environment');
      expect(leaks(text)).toEqual([]);
      // Read-only twice over: the mount (EROFS), and, as a uid of its own, a file the trainer's uid owns (EACCES).
      expect(text).toMatch(/== checkpoint open for writing\n(EROFS|EACCES)\n/);
    }
    expect(predictFound.sandboxed).toMatch(/== checkpoint open for writing\n(EROFS|EACCES)\n/);
  });

  test('without the sandbox the same cheat finds them: the checks above can fail', () => {
    for (const text of found.unsandboxed) {
      const leaked = leaks(text);
      expect(leaked).toContain('stack.json');
      expect(leaked).toContain('FLYWHEEL_API_TOKEN'); // from the neighbour's /proc/<pid>/environ
      expect(leaked.some((l) => l.includes('held-out'))).toBe(true);
      expect(text.split('== network\n')[1].split('\n== ')[0]).toContain('connected');
    }
    expect(leaks(predictFound.unsandboxed)).toContain('stack.json');
    for (const text of warmFound.unsandboxed.answers) {
      expect(leaks(text)).toContain('stack.json');
      expect(text).toContain('== checkpoint open for writing\nyes');
    }
  });

  test('no file under FLYWHEEL_HOME, and no predict scratch, holds held-out or probe text after held-out was scored', async () => {
    const heldoutScored = await harness.db.db.select().from(evalResults).where(eq(evalResults.split, 'heldout'));
    expect(heldoutScored.length).toBeGreaterThan(0);
    const files = filesUnder(harness.home).filter((f) => !f.endsWith('snoop.txt'));
    expect(files.length).toBeGreaterThan(10);
    const holding = files.filter((f) => {
      const text = fs.readFileSync(f, 'latin1');
      return heldoutWindows.some((w) => text.includes(w));
    });
    expect(holding).toEqual([]);
    // Every scratch folder this file's predicts made is gone (a held-out predict's holds its prompts).
    const scratch = predictScratchRoot() + path.sep;
    expect(made.filter((d) => d.startsWith(scratch)).length).toBeGreaterThan(0);
    expect(made.filter((d) => d.startsWith(scratch) && fs.existsSync(d))).toEqual([]);
  });

  test("the environment allow-list holds even unsandboxed: no secret in the trainer's own environment", () => {
    for (const text of [...found.unsandboxed, predictFound.unsandboxed]) {
      const env = text.split('== environment\n')[1].split('\n== ')[0];
      for (const [name, value] of Object.entries(SECRETS)) {
        expect(env).not.toContain(`${name}=`);
        expect(env).not.toContain(value);
      }
    }
  });
});

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? filesUnder(p) : e.isFile() ? [p] : [];
  });
}
