// Warm trainers (`trainer.warmTrain`: backends/local/train-server.ts, train-servers.ts) through the local backend,
// with the server started as a campaign's would be (activities/training/warm-train.ts: the fixture trainer's
// `train --serve` in the sandbox, FLYWHEEL_HOME hidden but for its dataset and its own folder). What a one-shot run
// promises must hold for a served one: one launch per run however often it is asked, each run's outputs in its own
// run directory, a crash or a cancel ending that run with its reason and no process of it left; and what serving
// adds must not open a way round: once a run's outputs are copied out (at its reply), nothing its server writes
// reaches them.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { LocalBackend } from '../../backends/local/local-backend';
import { isAlive } from '../../backends/local/process-liveness';
import { readServed } from '../../backends/local/served-record';
import { TrainServers } from '../../backends/local/train-servers';
import { launchDirOf } from '../../backends/run-dir-files';
import type { JobHandle, LaunchRequest } from '../../backends';
import { serveRequestOf } from '../../activities/training/warm-train';
import { ISOLATION_FILE, LAUNCHES_LOG, STDOUT_LOG } from '../../core/contract-files';
import type { RunJson } from '../../core/job-contract';
import { resolveLimits } from '../../core/resource-limits';
import { safeName } from '../../services/paths';
import { parseSpec } from '../../tasks/task-spec';
import { scratchDir } from '../helpers/env';
import { eventually } from '../helpers/loop-harness';
import { sandboxAvailable } from '../helpers/sandbox';
import { fixtureSpec, uniqueName } from '../helpers/specs';
import { jobEnded, steps } from './conformance';

const REPO = path.join(__dirname, '..', '..');
const home = scratchDir('warm-train-home');
const dataset = path.join(home, 'datasets', 'v1');
fs.mkdirSync(dataset, { recursive: true });
fs.writeFileSync(path.join(dataset, 'train.txt'), 'def f(x):\n    return x\n');
const base = fixtureSpec('warm-train', { steps: 10 });
const spec = parseSpec({ ...base, trainer: { ...base.trainer, warmTrain: true } });

const servers = new TrainServers({ idleMs: 60_000 });
afterAll(() => servers.close());
const backend = () => new LocalBackend({ servers, killGraceMs: 1_000 });

/** A run of the campaign, its run.json written as launchTraining writes it, served as launchTraining would serve it. */
function servedRun(label: string, params: Record<string, number | boolean>): LaunchRequest {
  const runId = `${uniqueName(label)}/e0/r1`;
  const runDir = path.join(home, 'runs', safeName(runId));
  fs.mkdirSync(runDir, { recursive: true });
  const run: RunJson = {
    runId,
    experimentId: runId.slice(0, -3),
    recipe: 'custom',
    params,
    seed: 5001,
    dataset: { versionId: 'v1', path: dataset, trainFile: path.join(dataset, 'train.txt') },
    baseCheckpoint: null,
    checkpointEvery: 0,
  };
  fs.writeFileSync(path.join(runDir, 'run.json'), JSON.stringify(run));
  const serve = serveRequestOf(spec, home, { campaignId: 'warm-train', proposer: 'random', recipeCommit: null }, run);
  return { runId, runDir, argv: [], limits: resolveLimits(undefined), serve };
}

const launchLines = (runDir: string) =>
  fs
    .readFileSync(path.join(launchDirOf(runDir), LAUNCHES_LOG), 'utf8')
    .trim()
    .split('\n');

/** The newest checkpoint's bytes hash as its manifest says. */
function checkpointIntact(runDir: string): boolean {
  const [c] = JSON.parse(fs.readFileSync(path.join(runDir, 'checkpoints', 'manifest.json'), 'utf8')).checkpoints;
  return (
    crypto
      .createHash('sha256')
      .update(fs.readFileSync(path.join(runDir, c.path)))
      .digest('hex') === c.sha256
  );
}

test("runs of one campaign share a warm server, each run's outputs in its own run directory, each launched once", async () => {
  const b = backend();
  const started = servers.started;
  const first = servedRun('warm-a', { steps: 10 });
  const h1 = await b.launch(first);
  expect((await b.launch(first)).ref).toBe(h1.ref); // asked again: the same run, not a second
  expect(await jobEnded(b, h1, 30_000)).toMatchObject({ state: 'succeeded', exitCode: 0 });
  const second = servedRun('warm-b', { steps: 5 });
  // Asked at once from two instances (two workers): one launch.
  const [h2, again] = await Promise.all([b.launch(second), backend().launch(second)]);
  expect(again.ref).toBe(h2.ref);
  expect(await jobEnded(b, h2, 30_000)).toMatchObject({ state: 'succeeded', exitCode: 0 });

  expect(servers.started - started).toBe(1);
  expect(h2.ref).toBe(h1.ref);
  expect(steps(first.runDir)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  expect(steps(second.runDir)).toEqual([1, 2, 3, 4, 5]);
  for (const r of [first, second]) {
    expect(launchLines(r.runDir)).toEqual([h1.ref]);
    expect(checkpointIntact(r.runDir)).toBe(true);
    // The run's folder in the server's is gone once its outputs are copied out.
    expect(fs.existsSync(readServed(launchDirOf(r.runDir))!.runDir)).toBe(false);
    expect(JSON.parse(fs.readFileSync(path.join(launchDirOf(r.runDir), ISOLATION_FILE), 'utf8'))).toEqual({
      sandbox: sandboxAvailable ? 'bubblewrap' : 'none',
      ...(sandboxAvailable ? {} : { reason: 'trainer.unsandboxed is set' }),
      warm: true,
    });
  }
  // A stdout line that is not a reply is the run's log, as a one-shot run's stdout.
  expect(fs.readFileSync(path.join(launchDirOf(first.runDir), STDOUT_LOG), 'utf8')).toContain('serving train');
}, 60_000);

test('a run that crashes its server fails with its exit code and stderr, and the next run gets a fresh server', async () => {
  const b = backend();
  const started = servers.started;
  const crash = servedRun('warm-crash', { crash: true });
  const h = await b.launch(crash);
  const s = await jobEnded(b, h, 30_000);
  expect(s).toMatchObject({ state: 'failed', exitCode: 3 });
  expect(await b.stderrTail(h, 5)).toContain('exploding on purpose');
  const next = servedRun('warm-after-crash', { steps: 3 });
  const h2 = await b.launch(next);
  expect(await jobEnded(b, h2, 30_000)).toMatchObject({ state: 'succeeded' });
  expect(h2.ref).not.toBe(h.ref);
  expect(servers.started - started).toBeGreaterThanOrEqual(1);
}, 60_000);

test("cancel kills the run's server; a cancel that comes after a run's end leaves the server's next run alone", async () => {
  const b = backend();
  const long = servedRun('warm-cancel', { steps: 600, sleepMs: 600_000 });
  const h = await b.launch(long);
  // While served, its lines are in the server's folder, and the backend says where (the follower reads them there).
  await eventually('the run to write', async () => (steps(b.liveRunDir(h)).length > 0 ? true : undefined), 30_000);
  expect(b.liveRunDir(h)).not.toBe(long.runDir);
  await b.cancel(h);
  expect(isAlive(Number(h.ref))).toBe(false);
  expect(await b.status(h)).toMatchObject({ state: 'failed', reason: 'cancelled' });
  // Its lines so far were copied out, where the follower reads the rest of them.
  expect(b.liveRunDir(h)).toBe(long.runDir);
  expect(steps(long.runDir).length).toBeGreaterThan(0);

  const done = servedRun('warm-done', { steps: 2 });
  const hd = await b.launch(done);
  expect(await jobEnded(b, hd, 30_000)).toMatchObject({ state: 'succeeded' });
  const busy = servedRun('warm-busy', { steps: 40, sleepMs: 2_000 });
  const hb = await b.launch(busy);
  expect(hb.ref).toBe(hd.ref); // the same server
  await b.cancel(hd); // late: `done` has ended, and its server is `busy`'s now
  expect(await jobEnded(b, hb, 30_000)).toMatchObject({ state: 'succeeded' });
  expect(steps(busy.runDir)).toHaveLength(40);
}, 60_000);

test("what a server writes once a run's outputs are copied out never reaches them (they are new files)", async () => {
  const b = backend();
  const r = servedRun('warm-late', { steps: 4, writeAfterReply: true });
  const h = await b.launch(r);
  expect(await jobEnded(b, h, 30_000)).toMatchObject({ state: 'succeeded' });
  // The fixture writes through the checkpoint it kept open once its run's folder is gone (within 5 ms of that).
  await new Promise((res) => setTimeout(res, 600));
  expect(checkpointIntact(r.runDir)).toBe(true);
}, 30_000);

test('a run whose worker dies is lost, its outputs so far in its run directory, and nothing of its server is left', async () => {
  const r = servedRun('warm-orphan', { steps: 600, sleepMs: 600_000 });
  const run = JSON.parse(fs.readFileSync(path.join(r.runDir, 'run.json'), 'utf8')) as RunJson;
  const specInput = { ...base, trainer: { ...base.trainer, warmTrain: true } };
  // A worker of its own: serves one long run from its own pool, says which, and waits to be killed.
  const code = `
    const { LocalBackend } = require(${JSON.stringify(path.join(REPO, 'backends/local/local-backend.ts'))});
    const { serveRequestOf } = require(${JSON.stringify(path.join(REPO, 'activities/training/warm-train.ts'))});
    const { parseSpec } = require(${JSON.stringify(path.join(REPO, 'tasks/task-spec.ts'))});
    const serve = serveRequestOf(parseSpec(${JSON.stringify(specInput)}), ${JSON.stringify(home)}, { campaignId: 'warm-train', proposer: 'random', recipeCommit: null }, ${JSON.stringify(run)});
    new LocalBackend().launch({ ...${JSON.stringify({ ...r, serve: undefined })}, serve }).then((h) => {
      console.log(JSON.stringify(h));
      setInterval(() => undefined, 1000);
    });`;
  const worker = spawn(process.execPath, ['-r', 'tsx/cjs', '-e', code], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
  const h = await new Promise<JobHandle>((resolve, reject) => {
    let out = '';
    worker.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]) as JobHandle);
    });
    worker.on('exit', (c) => reject(new Error(`the worker exited (${c}) before it launched`)));
  });
  const b = backend();
  await eventually('the run to write', async () => (steps(b.liveRunDir(h)).length > 0 ? true : undefined), 30_000);
  worker.kill('SIGKILL');
  expect(await jobEnded(b, h, 30_000)).toMatchObject({ state: 'lost' });
  expect(isAlive(Number(h.ref))).toBe(false);
  // What it wrote (and the follower may have stored) is in its run directory, as a lost one-shot run's is; its folder
  // in the server's is gone.
  expect(steps(r.runDir).length).toBeGreaterThan(0);
  expect(fs.existsSync(readServed(launchDirOf(r.runDir))!.runDir)).toBe(false);
  expect(b.liveRunDir(h)).toBe(r.runDir);
  // A later launch of the run finds its record and starts nothing (the workflow's next attempt is a new run).
  expect((await b.launch(r)).ref).toBe(h.ref);
  expect(launchLines(r.runDir)).toHaveLength(1);
}, 60_000);

test("a server that swaps its next run's folder for a link, the moment it appears, gets nothing written or chowned through it", async () => {
  // The server's own folder is its to write: a trainer that watches it can replace the folder the worker makes for
  // its next run with a link to any host path, between the worker's making it and filling it. Played here as the
  // race won at once: the folder is swapped as soon as the worker's call that makes it (or moves it in) returns or
  // before it runs. Nothing of the worker's may land in, or change the owner of, the link's target.
  const b = backend();
  const target = scratchDir('warm-swap-target');
  const owner = fs.statSync(target);
  const perRun = /\/warm-train\/s-[^/]+\/\d+$/;
  const realMkdir = fs.mkdirSync;
  const realRename = fs.renameSync;
  const swap = (p: string) => {
    if (fs.existsSync(p)) realRename.call(fs, p, `${p}.moved`);
    fs.symlinkSync(target, p);
  };
  const mkdir = jest.spyOn(fs, 'mkdirSync').mockImplementation(((p: fs.PathLike, o?: fs.MakeDirectoryOptions) => {
    const out = realMkdir.call(fs, p, o);
    if (perRun.test(String(p))) swap(String(p));
    return out;
  }) as typeof fs.mkdirSync);
  const rename = jest.spyOn(fs, 'renameSync').mockImplementation((from: fs.PathLike, to: fs.PathLike) => {
    if (perRun.test(String(to))) swap(String(to));
    return realRename.call(fs, from, to);
  });
  try {
    const r = servedRun('warm-swap', { steps: 2 });
    const launched = await b.launch(r).then(
      (h) => jobEnded(b, h, 30_000),
      (e: Error) => e,
    );
    expect(launched).toBeDefined();
  } finally {
    mkdir.mockRestore();
    rename.mockRestore();
  }
  expect(fs.readdirSync(target)).toEqual([]);
  expect(fs.statSync(target)).toMatchObject({ uid: owner.uid, gid: owner.gid });
}, 30_000);
