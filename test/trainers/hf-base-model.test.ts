// flywheel-base, the base model `flywheel setup hf` pretrains here (trainers/hf/pretrain_base.py), as the HF trainer
// starts from it: a folder Flywheel's frozen-checkpoint checks accept, its corpus and licence recorded, a tokenizer
// that gives each digit a token of its own; `model: flywheel-base` resolves to the folder the worker names and is
// refused in one line where none was built; and a short full fine-tune on two-digit sums lowers the loss of sums it
// never saw. The model is the one CI builds in .ci/install-hf.sh (cached under FLYWHEEL_HOME/models).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HF_BASE_MODEL_ALIAS, HF_BASE_MODEL_ENV } from '../../core/trainer-program';
import type { BaseModelBuilt } from '../../stack/hf-base-model';
import { hfBaseModel } from '../helpers/hf-base-model';
import { hfTestPythonPath } from '../helpers/hf-python';
import { HF_ENV, hfProbe, hfTrainer, makeHfRunDir, readManifest } from '../helpers/hf-trainer-run';
import { requires } from '../helpers/requires';

requires('hf');

const REPO = path.join(__dirname, '..', '..');

let scratch: string;
let base: BaseModelBuilt;
let dataDir: string;
let heldoutFile: string;

/** Two-digit sums as tasks/arithmetic writes them ("31+39=" → "070\n"); every 7th pair is held out. */
function writeSums(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const train: object[] = [];
  const heldout: object[] = [];
  for (let a = 10; a < 100; a++)
    for (let b = 10; b < 100; b++) {
      const e = { prompt: `${a}+${b}=`, completion: `${String(a + b).padStart(3, '0')}\n`, category: 'sum', weight: 1, source: 'base' };
      ((a * 100 + b) % 7 === 0 ? heldout : train).push(e);
    }
  const jsonl = (xs: object[]) => xs.map((x) => JSON.stringify(x)).join('\n') + '\n';
  fs.writeFileSync(path.join(dir, 'train.jsonl'), jsonl(train));
  fs.writeFileSync(path.join(dir, 'train.txt'), train.map((e) => Object.values(e).slice(0, 2).join('')).join('\n'));
  const file = path.join(dir, '..', 'heldout.jsonl');
  fs.writeFileSync(file, jsonl(heldout.slice(0, 60)));
  return file;
}

beforeAll(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-base-model-'));
  base = hfBaseModel();
  dataDir = path.join(scratch, 'data');
  heldoutFile = writeSums(dataDir);
}, 1_800_000);

afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

test('flywheel-base is a checked safetensors folder with its provenance, and its tokenizer splits digits one a token', () => {
  const code = [
    'import json, sys',
    `sys.path[:0] = ${JSON.stringify([path.join(REPO, 'formats', 'hf')])}`,
    'from frozen_model import check_frozen_folder',
    'from transformers import AutoTokenizer',
    'check_frozen_folder(sys.argv[1])',
    'tok = AutoTokenizer.from_pretrained(sys.argv[1])',
    'print(json.dumps(tok.convert_ids_to_tokens(tok("31+39=070", add_special_tokens=False)["input_ids"])))',
  ].join('\n');
  const tokens = JSON.parse(execFileSync(hfTestPythonPath(), ['-c', code, base.folder], { encoding: 'utf8', env: HF_ENV })) as string[];
  expect(tokens.filter((t) => /\d/.test(t))).toEqual(['3', '1', '3', '9', '0', '7', '0']);
  const prov = JSON.parse(fs.readFileSync(path.join(base.folder, 'PROVENANCE.json'), 'utf8')) as BaseModelBuilt & { architecture: string };
  expect(prov.architecture).toBe('LlamaForCausalLM');
  expect(prov.params).toBeGreaterThan(1_000_000);
  expect(prov.corpus.licence).toMatch(/^PSF/);
  expect(prov.corpus.sha256).toMatch(/^[0-9a-f]{64}$/);
  // Pretrained: well under a uniform guess over the vocabulary (ln 2048 = 7.6 nats).
  expect(prov.heldoutLoss).toBeLessThan(6);
  expect(path.basename(base.folder)).toMatch(/^flywheel-base-[0-9a-f]{12}$/);
});

test('model: flywheel-base is refused in one line where the worker names no base model', () => {
  const dir = makeHfRunDir(path.join(scratch, 'unbuilt'), dataDir, { model: HF_BASE_MODEL_ALIAS, steps: 5 }, 0);
  const env: NodeJS.ProcessEnv = { ...HF_ENV };
  delete env[HF_BASE_MODEL_ENV];
  const r = hfTrainer(['train', '--run-dir', dir], env);
  expect(r.status).toBe(1);
  expect(r.stderr.trim()).toBe('hf-trainer: params.model flywheel-base: no base model has been built on this host: run flywheel setup hf');
  expect(fs.readdirSync(dir)).toEqual(['run.json']);
});

test('a short full fine-tune from flywheel-base lowers the loss of held-out sums', () => {
  const steps = 120;
  const dir = makeHfRunDir(
    path.join(scratch, 'sums'),
    dataDir,
    { model: HF_BASE_MODEL_ALIAS, steps, batchSize: 16, lr: 0.003, maxLength: 16, lrWarmup: 10, logEvery: 40 },
    0,
  );
  const r = hfTrainer(['train', '--run-dir', dir], { ...HF_ENV, [HF_BASE_MODEL_ENV]: base.folder });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const [last] = readManifest(dir).checkpoints.slice(-1);
  expect(last.step).toBe(steps);
  const before = hfProbe<number>('nll', base.folder, heldoutFile);
  const after = hfProbe<number>('nll', path.join(dir, last.path), heldoutFile);
  // nats per completion token: from the base's guess to most of the way to the sums.
  expect(after).toBeLessThan(before * 0.6);
});
