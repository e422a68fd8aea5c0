// Red team: a trainer harvests files the sandbox binds by accident. With the layout the task docs suggested (the
// suite file beside the trainer script), binding the script's folder showed the trainer every split of the suite;
// and `trainer.readOnlyPaths` took any folder, /tmp (other runs' scratch, PostgreSQL's socket) and the folder that
// holds FLYWHEEL_HOME included. Now the sandbox binds the script alone, and both `flywheel validate` and the
// training worker refuse, in one line and before anything is written, a path that would show the trainer /, /tmp,
// FLYWHEEL_HOME, a PostgreSQL socket folder or a registered suite's file.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { isolatedEntry, trainerSetupOf } from '../../activities/training/trainer-isolation';
import { parseSpec } from '../../tasks/task-spec';
import { experiments } from '../../db/schema';
import { cliEnv, runCli } from '../helpers/cli';
import { loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { requires } from '../helpers/requires';
import { uniqueName } from '../helpers/specs';

requires('bubblewrap');

let harness: LoopHarness;
let taskDir: string;
const SECRET = `held-out-answer-${Date.now()}`;

/** Reads the suite file beside itself and lists its own folder; writes what it saw to its run directory. */
const HARVEST = `
const fs = require('node:fs'); const path = require('node:path');
const dir = process.argv[process.argv.indexOf('--run-dir') + 1];
const seen = {};
try { seen.suite = fs.readFileSync(path.join(__dirname, 'suite.yaml'), 'utf8'); } catch (e) { seen.suite = e.code; }
try { seen.folder = fs.readdirSync(__dirname); } catch (e) { seen.folder = e.code; }
fs.writeFileSync(path.join(dir, 'seen.json'), JSON.stringify(seen));
`;

const suiteYaml = (name: string) =>
  [
    `name: ${name}`,
    'items:',
    '  - { id: p1, split: public, grader: { kind: exact_match }, prompt: "2+2=", reference: "4" }',
    `  - { id: h1, split: heldout, grader: { kind: exact_match }, prompt: "3+4=", reference: "${SECRET}" }`,
    '',
  ].join('\n');

beforeAll(async () => {
  harness = await loopHarness('redteam-harvest');
  taskDir = path.join(harness.home, '..', `task-${path.basename(harness.home)}`);
  fs.mkdirSync(taskDir, { recursive: true, mode: 0o755 });
  fs.writeFileSync(path.join(taskDir, 'trainer.js'), HARVEST);
  fs.writeFileSync(path.join(taskDir, 'suite.yaml'), suiteYaml(uniqueName('harvest')));
  const added = await runCli(cliEnv(harness, 'harvest'), ['suite', 'add', path.join(taskDir, 'suite.yaml')]);
  expect(added.status).toBe(0);
}, 180_000);

afterAll(async () => {
  await harness?.close();
  fs.rmSync(taskDir, { recursive: true, force: true });
});

const spec = (trainer: Record<string, unknown>) => ({
  name: 'harvest',
  trainer: { command: [process.execPath, path.join(taskDir, 'trainer.js')], ...trainer },
  searchSpace: { lr: { type: 'float', low: 0.001, high: 0.01 } },
});

test('the suite file beside the trainer script is not in its sandbox: the script alone is bound', () => {
  const runDir = fs.mkdtempSync(path.join(harness.home, 'run-'));
  const cmd = isolatedEntry(trainerSetupOf(parseSpec(spec({})), harness.home), 'train', ['--run-dir', runDir], {
    cwd: runDir,
    data: [],
    readWrite: [runDir],
  });
  const r = spawnSync(cmd.argv[0], cmd.argv.slice(1), { encoding: 'utf8', env: {}, timeout: 60_000 });
  expect(r.stderr).toBe('');
  const seen = JSON.parse(fs.readFileSync(path.join(runDir, 'seen.json'), 'utf8')) as { suite: string; folder: unknown };
  expect(seen.suite).toBe('ENOENT');
  expect(seen.folder).toEqual(['trainer.js']);
});

describe('flywheel validate refuses a path that would show the trainer what the sandbox hides, in one line, exit 2', () => {
  const cases: [string, () => string, RegExp][] = [
    ['/', () => '/', /trainer\.readOnlyPaths\.0: \/: is the whole filesystem/],
    // (FLYWHEEL_HOME is under /tmp in the tests, so either reason may come first.)
    ['/tmp', () => '/tmp', /trainer\.readOnlyPaths\.0: \/tmp: holds (\/tmp|FLYWHEEL_HOME)/],
    ['the folder that holds FLYWHEEL_HOME', () => path.dirname(harness.home), /holds FLYWHEEL_HOME/],
    ['a folder inside FLYWHEEL_HOME', () => path.join(harness.home, 'runs'), /is inside FLYWHEEL_HOME/],
    ["PostgreSQL's socket folder", () => '/var/run/postgresql', /PostgreSQL/],
    ["a registered suite's folder", () => taskDir, /holds the registered eval suite .*suite\.yaml/],
  ];
  for (const [what, p, line] of cases)
    test(what, async () => {
      const file = path.join(taskDir, `spec-${what.replace(/\W+/g, '-')}.json`);
      fs.writeFileSync(file, JSON.stringify(spec({ readOnlyPaths: [p()] })));
      const r = await runCli(cliEnv(harness, 'harvest'), ['validate', file]);
      expect({ status: r.status, lines: r.stdout.trim().split('\n') }).toEqual({ status: 2, lines: [expect.stringMatching(line)] });
    });
});

test('the training worker refuses the same before the loop writes a row', async () => {
  const workers = await harness.workers('t-harvest');
  const id = uniqueName('harvest');
  const handle = await workers.startLoop(id, {
    ...spec({ readOnlyPaths: [taskDir] }),
    name: id,
    innerLoop: { budget: { experiments: 1, parallelism: 1 }, batchSize: 1, startupTrials: 1 },
  });
  await expect(handle.result()).rejects.toThrow();
  const failure = await handle.describe();
  expect(failure.status.name).toBe('FAILED');
  const history = JSON.stringify(await handle.fetchHistory());
  expect(history).toMatch(/holds the registered eval suite/);
  expect(await harness.db.db.select().from(experiments).where(eq(experiments.campaignId, id))).toEqual([]);
}, 180_000);
