// The HF trainer's sandbox (trainer.command: hf): its interpreter is the hf-venv, which lives under FLYWHEEL_HOME,
// and FLYWHEEL_HOME is hidden from every trainer. The venv alone is bound back, read-only, after the mask, with the
// trainer's own folders of the checkout (trainers/hf, trainers/torch, formats/hf). A stand-in (test/fixtures/
// hf-snoop.py) runs in exactly the sandbox the launch builds for `train`, in main.py's place, on a venv made here
// under a FLYWHEEL_HOME of the test's own, and reports what it sees: the venv and its own code, never stack.json,
// another file of FLYWHEEL_HOME or the rest of the checkout. Run without the sandbox it reads them: the checks can fail.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isolatedEntry, trainerSetupOf } from '../../activities/training/trainer-isolation';
import { HF_TRAINER, REPO } from '../../backends/trainer-programs';
import { parseSpec } from '../../tasks/task-spec';
import { requires } from '../helpers/requires';

requires('bubblewrap');

const SNOOP = path.join(__dirname, '..', 'fixtures', 'hf-snoop.py');

interface Seen {
  prefix: string;
  probe: string | null;
  home: string[] | string;
  venvWritable: boolean;
  secretsReadable: string[];
  repo: string[] | string;
  trainerCode: Record<string, boolean>;
  otherCode: Record<string, boolean>;
}

let home: string;
let venv: string;
let runDir: string;
let dataset: string;
let secrets: string[];
const savedPython = process.env.FLYWHEEL_HF_PYTHON;

beforeAll(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-sandbox-home-'));
  venv = path.join(home, 'hf-venv');
  // A real venv of the host's Python (no packages: the stand-in needs none), with one module only it has.
  execFileSync('python3', ['-m', 'venv', '--without-pip', venv]);
  const site = execFileSync(path.join(venv, 'bin', 'python3'), ['-c', 'import site; print(site.getsitepackages()[0])'], {
    encoding: 'utf8',
  }).trim();
  fs.writeFileSync(path.join(site, 'flywheel_venv_probe.py'), "MARK = 'from the hf-venv'\n");
  runDir = path.join(home, 'runs', 'r1');
  dataset = path.join(home, 'datasets', 'v1');
  fs.mkdirSync(runDir, { recursive: true });
  fs.mkdirSync(dataset, { recursive: true });
  fs.writeFileSync(path.join(dataset, 'train.jsonl'), '{"prompt":"1+1=","completion":"2"}\n');
  secrets = [path.join(home, 'stack.json'), path.join(home, 'suites', 'heldout.jsonl'), path.join(home, 'datasets', 'v0', 'train.jsonl')];
  for (const s of secrets) {
    fs.mkdirSync(path.dirname(s), { recursive: true });
    fs.writeFileSync(s, 'secret\n', { mode: 0o600 });
  }
  delete process.env.FLYWHEEL_HF_PYTHON; // the venv under FLYWHEEL_HOME, as `flywheel setup hf` makes it
});

afterAll(() => {
  if (savedPython !== undefined) process.env.FLYWHEEL_HF_PYTHON = savedPython;
  fs.rmSync(home, { recursive: true, force: true });
});

/** The launch's own sandboxed argv for `train`, with the stand-in in main.py's place. */
function sandboxedSnoop(): string[] {
  const spec = parseSpec({
    name: 'hf-sandbox',
    // The stand-in's folder must be visible for it to run at all: named in readOnlyPaths.
    trainer: { command: 'hf', readOnlyPaths: [path.dirname(SNOOP)] },
    searchSpace: { lr: { type: 'float', low: 0.001, high: 0.01 } },
  });
  const cmd = isolatedEntry(trainerSetupOf(spec, home), 'train', ['--run-dir', runDir], {
    cwd: runDir,
    data: [dataset],
    readWrite: [runDir],
  });
  expect(cmd.sandbox).toBe('bubblewrap');
  const at = cmd.argv.lastIndexOf(HF_TRAINER);
  expect(cmd.argv[at - 1]).toBe(path.join(venv, 'bin', 'python3'));
  return [...cmd.argv.slice(0, at), SNOOP, home, REPO, ...secrets];
}

function run(argv: string[]): Seen {
  const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', env: {} });
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout) as Seen;
}

test('inside, the trainer runs on the hf-venv and sees its own code; FLYWHEEL_HOME shows nothing but the venv and its inputs', () => {
  const seen = run(sandboxedSnoop());
  expect(seen.prefix).toBe(venv);
  expect(seen.probe).toBe('from the hf-venv');
  expect(seen.venvWritable).toBe(false);
  expect(seen.secretsReadable).toEqual([]);
  expect(seen.home).toEqual(['datasets', 'hf-venv', 'runs']);
  expect(seen.trainerCode).toEqual({
    'trainers/hf/main.py': true,
    'trainers/torch/run_config.py': true,
    'formats/hf/frozen_model.py': true,
  });
  expect(seen.otherCode).toEqual({ 'README.md': false, 'tasks/arithmetic/problems.ts': false });
});

test('outside the sandbox the same stand-in reads stack.json and the rest: the checks above can fail', () => {
  const seen = run([path.join(venv, 'bin', 'python3'), SNOOP, home, REPO, ...secrets]);
  expect(seen.secretsReadable).toEqual(secrets);
  expect(seen.home).toEqual(expect.arrayContaining(['stack.json', 'suites']));
  expect(seen.otherCode['README.md']).toBe(true);
});
