// The Hugging Face trainer (trainers/hf/) against the training-job contract, run as the backends run it: the
// hf-venv's python3 on a run directory, argv as data, real transformers/TRL/peft on the CPU, a tiny Llama built from a
// config and a tokenizer trained on the task's own text (no hub). SFT, full and LoRA, lowers the completion loss with
// only completion tokens as targets, an example drawn by its weight and weighing as one in the loss; checkpoints are
// frozen folders whose digest is sha256Folder's; predict answers exactly the prompts given, one-shot and as a warm `predict --serve`; trust_remote_code, an unknown knob and a bad
// value are refused in one line.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sha256Folder } from '../../services/checkpoint-manifest';
import { HF_CAUSAL_LM_FORMAT, type RunJson } from '../../core/job-contract';
import { hfTestPythonPath } from '../helpers/hf-python';
import { requires } from '../helpers/requires';
import { makeTinyHfModel } from '../helpers/tiny-hf-model';
import { serveRequests } from '../helpers/predict-serve';
import {
  COLOURS,
  HF_ENV,
  TASK_TEXT,
  HF_MAIN,
  hfPredict,
  hfProbe,
  hfTrainer,
  makeHfRunDir,
  promptOf,
  readManifest,
  readMetrics,
  writeDataset,
} from '../helpers/hf-trainer-run';

requires('hf');

const REPO = path.join(__dirname, '..', '..');

let scratch: string;
let dataDir: string;
let model: string;
const TRAIN = { lr: 0.003, batchSize: 8, steps: 150, logEvery: 50 };

beforeAll(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-trainer-'));
  dataDir = path.join(scratch, 'data');
  writeDataset(dataDir);
  model = makeTinyHfModel(path.join(scratch, 'model'), { text: TASK_TEXT });
}, 120_000);

afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

const run = (name: string, params: Record<string, unknown>, every: number, over: Partial<RunJson> = {}) =>
  makeHfRunDir(path.join(scratch, name), dataDir, { model, ...params }, every, over);

/** Every listed checkpoint: a frozen folder, its digest and per-file hashes those of sha256Folder (and of Python's). */
function expectFrozenCheckpoints(dir: string, steps: number[]): void {
  const manifest = readManifest(dir);
  expect(manifest.checkpoints.map((c) => c.step)).toEqual(steps);
  for (const c of manifest.checkpoints) {
    expect(c.format).toBe(HF_CAUSAL_LM_FORMAT);
    expect(c.path).toBe(`checkpoints/step-${c.step}`);
    const folder = path.join(dir, c.path);
    const ts = sha256Folder(folder);
    expect(c.sha256).toBe(ts.sha256);
    expect(c.files).toEqual(ts.files);
    expect(hfProbe<{ sha256: string }>('digest', folder).sha256).toBe(ts.sha256);
    const names = Object.keys(ts.files);
    expect(names).toEqual(expect.arrayContaining(['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json']));
    // Self-contained and inert: no pickle, no optimizer, no adapter, no code.
    expect(names.filter((n) => /\.(pt|pth|bin|pkl|py)$|^adapter_|^optimizer|^rng_state|trainer_state/.test(n))).toEqual([]);
  }
  expect(fs.readdirSync(path.join(dir, 'checkpoints')).filter((f) => f.startsWith('.tmp'))).toEqual([]);
  // The resume state lived outside the frozen folders and is gone once the run has finished.
  expect(fs.existsSync(path.join(dir, 'hf-state'))).toBe(false);
}

test('SFT, full fine-tuning: the completion loss falls, frozen checkpoints are listed, predict answers what it learnt', () => {
  const dir = run('full', TRAIN, 75);
  const r = hfTrainer(['train', '--run-dir', dir], { ...HF_ENV, FLYWHEEL_PEAK_FLOPS: '1e12' });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);

  const lines = readMetrics(dir);
  expect(lines.map((l) => l.step)).toEqual([50, 100, 150]);
  for (const l of lines) for (const k of ['loss', 'lr', 'tokens', 'tokens_per_s', 'mfu']) expect(Number.isFinite(l[k])).toBe(true);
  expect(lines[2].tokens).toBeGreaterThan(lines[1].tokens);
  // Nats per completion token: an untrained model over a 300-token vocabulary starts near ln(300) = 5.7.
  expect(lines[2].loss).toBeLessThan(lines[0].loss / 4);
  // MFU is 6N FLOPs per token over the peak (FLYWHEEL_PEAK_FLOPS), N the model's parameter count.
  const n = hfProbe<number>('parameters', model);
  for (const l of lines) expect(l.mfu / ((6 * n * l.tokens_per_s) / 1e12)).toBeCloseTo(1, 6);
  expectFrozenCheckpoints(dir, [75, 150]);

  // Greedy, stopped at EOS: the completions learnt by heart, with nothing after them.
  const asked = COLOURS.map(([thing]) => ({ id: thing, prompt: promptOf(thing), maxBytes: 32 }));
  const answers = hfPredict(path.join(dir, 'checkpoints', 'step-150'), asked, scratch);
  expect(answers.map((a) => a.id)).toEqual(COLOURS.map(([thing]) => thing));
  const right = answers.filter((a, i) => a.completion === COLOURS[i][1]).length;
  expect(right).toBeGreaterThanOrEqual(8);

  // maxBytes cuts a completion to that many UTF-8 bytes (a character cut short is dropped); 0 asks for nothing; a
  // repeated prompt gets the same answer; an empty prompt is answered too.
  const cafe = answers[COLOURS.findIndex(([t]) => t === 'latte')].completion;
  const cut = hfPredict(
    path.join(dir, 'checkpoints', 'step-150'),
    [
      { id: 'latte-4', prompt: promptOf('latte'), maxBytes: 4 },
      { id: 'sky-0', prompt: promptOf('sky'), maxBytes: 0 },
      { id: 'empty', prompt: '', maxBytes: 8 },
      { id: 'latte-again', prompt: promptOf('latte'), maxBytes: 32 },
    ],
    scratch,
  );
  expect(cut.map((a) => a.id)).toEqual(['latte-4', 'sky-0', 'empty', 'latte-again']);
  expect(cut[0].completion).toBe(
    Buffer.from(cafe)
      .subarray(0, 4)
      .toString('utf8')
      .replace(/\uFFFD/g, ''),
  );
  expect(Buffer.byteLength(cut[0].completion)).toBeLessThanOrEqual(4);
  expect(cut[1].completion).toBe('');
  expect(Buffer.byteLength(cut[2].completion)).toBeLessThanOrEqual(8);
  expect(cut[3].completion).toBe(cafe);

  // A finished run restarted on its directory does nothing.
  const again = hfTrainer(['train', '--run-dir', dir]);
  expect(again.status).toBe(0);
  expect(readMetrics(dir)).toHaveLength(3);
}, 600_000);

test('predict --serve answers checkpoint after checkpoint as the one-shot predict does, a bad request without ending', async () => {
  const dir = path.join(scratch, 'full');
  const asked = COLOURS.map(([thing]) => ({ id: thing, prompt: promptOf(thing), maxBytes: 32 }));
  const prompts = path.join(scratch, 'served-prompts.jsonl');
  fs.writeFileSync(prompts, asked.map((p) => JSON.stringify(p)).join('\n') + '\n');
  const out = (k: number) => path.join(scratch, `served-${k}.jsonl`);
  const read = (file: string) =>
    fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: string; completion: string });
  const t0 = performance.now();
  const served = await serveRequests([hfTestPythonPath(), HF_MAIN], HF_ENV, [
    { checkpoint: path.join(dir, 'checkpoints', 'step-150'), prompts, out: out(1) },
    { checkpoint: path.join(scratch, 'no-such-folder'), prompts, out: out(2) },
    { checkpoint: path.join(dir, 'checkpoints', 'step-75'), prompts, out: out(3) },
  ]);
  const servedMs = performance.now() - t0;
  expect(served.replies.map((r) => r.ok)).toEqual([true, false, true]);
  expect(served.replies[1].error).toContain('no-such-folder');
  expect(fs.existsSync(out(2))).toBe(false);
  expect(served.stray).toEqual([]);
  expect(served.code).toBe(0);
  const t1 = performance.now();
  const oneShot150 = hfPredict(path.join(dir, 'checkpoints', 'step-150'), asked, scratch);
  const oneShot75 = hfPredict(path.join(dir, 'checkpoints', 'step-75'), asked, scratch);
  const oneShotMs = performance.now() - t1;
  expect(read(out(1))).toEqual(oneShot150);
  expect(read(out(3))).toEqual(oneShot75);
  // Measured, not asserted: the imports (torch, transformers) paid once instead of per checkpoint.
  console.log(
    `hf predict, two checkpoints: ${Math.round(servedMs)} ms served warm (three requests), ${Math.round(oneShotMs)} ms as two one-shot processes`,
  );
}, 600_000);

test('only completion tokens (and the EOS after them) are loss targets; prompt tokens never are', () => {
  const dir = run('targets', { ...TRAIN, steps: 2 }, 0);
  const { rows, eos } = hfProbe<{ rows: { input: string; targets: string; notTargets: string }[]; eos: string }>('targets', dir);
  expect(rows).toHaveLength(TRAIN.batchSize);
  const byPrompt = new Map(COLOURS.map(([t, c]) => [promptOf(t), c]));
  for (const row of rows) {
    expect(byPrompt.get(row.notTargets)).toBeDefined(); // what is not a target is exactly a whole prompt
    expect(row.targets).toBe(byPrompt.get(row.notTargets) + eos);
    expect(row.input).toBe(row.notTargets + row.targets);
  }
}, 300_000);

test('an example weighs per example: drawn by its weight alone, each sequence its own mean in the loss', () => {
  // Completions of 2 to 9 tokens (a colour repeated), one example of weight 2.
  const uneven = path.join(scratch, 'uneven-data');
  fs.mkdirSync(uneven, { recursive: true });
  const lines = COLOURS.map(([t, c], i) => ({
    prompt: promptOf(t),
    completion: Array.from({ length: 1 + (i % 4) * 2 }, () => c).join(' '),
    category: 'colour',
    weight: i === 0 ? 2 : 1,
    source: 'base',
  }));
  fs.writeFileSync(path.join(uneven, 'train.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  fs.writeFileSync(path.join(uneven, 'train.txt'), '');
  const dir = makeHfRunDir(path.join(scratch, 'uneven'), uneven, { model, ...TRAIN, steps: 2 }, 0);
  const r = hfProbe<{ trained: number; perExample: number; perToken: number; tokens: number[]; drawWeights: number[] }>(
    'example-loss',
    dir,
  );
  expect(r.drawWeights).toEqual([1, 2]); // the weights themselves, not weight × (completion bytes + 1)
  expect(new Set(r.tokens).size).toBeGreaterThan(1); // the batch's sequences differ in length...
  expect(Math.abs(r.perExample - r.perToken)).toBeGreaterThan(0.01); // ...enough that the two means differ
  expect(r.trained).toBeCloseTo(r.perExample, 4);
}, 300_000);

test('SFT with LoRA: the completion loss falls and the checkpoint holds the adapter merged into the weights', () => {
  // LoRA adapts a trained model (on a random one its updates, scaled by near-zero activations, barely move the loss):
  // a short full fine-tuning first makes the base, which then goes in as params.model, a local folder.
  const warm = run('lora-base', { ...TRAIN, steps: 30, logEvery: 30 }, 0);
  expect(hfTrainer(['train', '--run-dir', warm]).status).toBe(0);
  const base = path.join(warm, 'checkpoints', 'step-30');
  const lora = { r: 16, alpha: 64, targetModules: 'all-linear' };
  const dir = run('lora', { ...TRAIN, model: base, lr: 0.005, lora }, 0);
  const r = hfTrainer(['train', '--run-dir', dir]);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const lines = readMetrics(dir);
  expect(lines.map((l) => l.step)).toEqual([50, 100, 150]);
  expect(lines[2].loss).toBeLessThan(lines[0].loss);
  expectFrozenCheckpoints(dir, [150]);
  const folder = path.join(dir, 'checkpoints', 'step-150');
  // The same architecture and tensors as the base (no peft config, no adapter tensors), with different weights...
  const config = JSON.parse(fs.readFileSync(path.join(folder, 'config.json'), 'utf8')) as Record<string, unknown>;
  expect(config.architectures).toEqual(['LlamaForCausalLM']);
  expect(hfProbe<string[]>('tensor-names', folder)).toEqual(hfProbe<string[]>('tensor-names', base));
  expect(sha256Folder(folder).files['model.safetensors']).not.toBe(sha256Folder(base).files['model.safetensors']);
  // ...that hold what the adapter learnt: the completion loss, computed outside the trainer on the merged folder
  // loaded as a plain model, is below the base's (2.51 -> 2.34 nats when this was written).
  const examples = path.join(dataDir, 'train.jsonl');
  expect(hfProbe<number>('nll', folder, examples)).toBeLessThan(hfProbe<number>('nll', base, examples) - 0.1);
  const answers = hfPredict(
    folder,
    COLOURS.map(([thing]) => ({ id: thing, prompt: promptOf(thing), maxBytes: 32 })),
    scratch,
  );
  expect(answers.map((a) => a.id)).toEqual(COLOURS.map(([thing]) => thing));
}, 600_000);

test('zero steps writes the starting model as checkpoint 0 (a campaign baseline)', () => {
  const dir = run('untrained', { steps: 0 }, 0);
  const r = hfTrainer(['train', '--run-dir', dir]);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  expectFrozenCheckpoints(dir, [0]);
}, 300_000);

/** A copy of the tiny model with something that asks for remote code. */
function codeModel(name: string, change: (folder: string) => void): string {
  const folder = path.join(scratch, name);
  fs.cpSync(model, folder, { recursive: true });
  change(folder);
  return folder;
}

const addAutoMap = (folder: string) => {
  const file = path.join(folder, 'config.json');
  const config = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  fs.writeFileSync(file, JSON.stringify({ ...config, auto_map: { AutoModelForCausalLM: 'modeling_evil.EvilForCausalLM' } }));
};
const addCode = (folder: string) => fs.writeFileSync(path.join(folder, 'modeling_evil.py'), 'import os\nos.system("touch /tmp/pwned")\n');

test.each([
  ['params.trustRemoteCode', () => ({ trustRemoteCode: true }), /^hf-trainer: run\.json: params\.trustRemoteCode is refused: /],
  ['params.trust_remote_code', () => ({ trust_remote_code: true }), /^hf-trainer: run\.json: params\.trust_remote_code is refused: /],
  [
    'a model folder with an auto_map',
    () => ({ model: codeModel('auto-map', addAutoMap) }),
    /^hf-trainer: params\.model: .*config\.json: asks for remote code \(auto_map\); trust_remote_code is refused$/,
  ],
  [
    'a model folder holding code',
    () => ({ model: codeModel('with-code', addCode) }),
    /^hf-trainer: params\.model: .*: holds code \(modeling_evil\.py\); trust_remote_code is refused$/,
  ],
  [
    'an unknown knob',
    () => ({ learning_rate: 0.1 }),
    /^hf-trainer: run\.json: params\.learning_rate is not an hf trainer knob \(knobs: model, tokenizer, objective, .*\)$/,
  ],
  ['a bad value', () => ({ lr: -1 }), /^hf-trainer: run\.json: params\.lr must be a number > 0 \(got -1\)$/],
  [
    'an unknown LoRA knob',
    () => ({ lora: { r: 4, alpha: 8, targetModules: ['q_proj'], rank: 4 } }),
    /^hf-trainer: run\.json: params\.lora\.rank is not a LoRA knob \(knobs: r, alpha, targetModules, dropout\)$/,
  ],
  ['loraAlpha without loraRank', () => ({ loraAlpha: 8 }), /^hf-trainer: run\.json: params\.loraAlpha needs params\.loraRank$/],
  ['steps and epochs both', () => ({ steps: 5, epochs: 1 }), /^hf-trainer: run\.json: params\.steps and params\.epochs are exclusive/],
  [
    'dpo on a version without pairs',
    () => ({ objective: 'dpo' }),
    /^hf-trainer: run\.json: params\.objective is "dpo" but the dataset version has no pairs/,
  ],
])(
  'train refuses %s: exit 1, one line, nothing written',
  (_, params, message) => {
    const dir = run(`bad-${Math.random().toString(36).slice(2)}`, { ...TRAIN, ...params() }, 0);
    const r = hfTrainer(['train', '--run-dir', dir]);
    expect(r.status).toBe(1);
    expect(r.stderr.trimEnd()).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(fs.readdirSync(dir)).toEqual(['run.json']);
    expect(fs.existsSync('/tmp/pwned')).toBe(false);
  },
  300_000,
);

test('loraRank, the flat knob a search space varies, sets the adapter rank (and alpha 2 x rank) over lora or all-linear, 0 full fine-tuning', () => {
  const resolve = (params: object) => {
    const code = [
      'import json, sys',
      `sys.path[:0] = ${JSON.stringify([path.join(REPO, 'trainers', 'hf'), path.join(REPO, 'trainers', 'torch')])}`,
      'from knobs import resolve_params',
      'print(json.dumps(resolve_params(json.loads(sys.argv[1]))["lora"]))',
    ].join('\n');
    return JSON.parse(execFileSync(hfTestPythonPath(), ['-c', code, JSON.stringify(params)], { encoding: 'utf8' })) as unknown;
  };
  expect(resolve({ loraRank: 8 })).toEqual({ r: 8, alpha: 16, targetModules: 'all-linear', dropout: 0 });
  // Rank 0 is full fine-tuning, even over a fixed lora: one categorical searches LoRA and full.
  expect(resolve({ loraRank: 0 })).toBeNull();
  expect(resolve({ loraRank: 0, lora: { r: 8, alpha: 16, targetModules: 'all-linear' } })).toBeNull();
  expect(resolve({ loraRank: 4, loraAlpha: 4, lora: { r: 64, alpha: 1, targetModules: ['q_proj'] } })).toEqual({
    r: 4,
    alpha: 4,
    targetModules: ['q_proj'],
    dropout: 0,
  });
  expect(resolve({ lora: { r: 2, alpha: 2, targetModules: ['v_proj'] } })).toEqual({
    r: 2,
    alpha: 2,
    targetModules: ['v_proj'],
    dropout: 0,
  });
  expect(resolve({})).toBeNull();
});

test('predict refuses a checkpoint that asks for remote code and a bad prompt line, writing nothing', () => {
  const prompts = path.join(scratch, 'one-prompt.jsonl');
  const out = path.join(scratch, 'never.jsonl');
  fs.writeFileSync(prompts, JSON.stringify({ id: 'a', prompt: promptOf('sky'), maxBytes: 8 }) + '\n');
  for (const [folder, message] of [
    [
      codeModel('predict-auto-map', addAutoMap),
      /^hf-trainer: checkpoint .*config\.json: asks for remote code \(auto_map\); trust_remote_code is refused\n$/,
    ],
    [codeModel('predict-code', addCode), /^hf-trainer: checkpoint .*: holds code \(modeling_evil\.py\); trust_remote_code is refused\n$/],
  ] as const) {
    const r = hfTrainer(['predict', '--checkpoint', folder, '--prompts', prompts, '--out', out]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(fs.existsSync(out)).toBe(false);
  }
  fs.writeFileSync(
    prompts,
    JSON.stringify({ id: 'a', prompt: 'x', maxBytes: 3 }) + '\n' + JSON.stringify({ id: 'b', prompt: 'y', maxBytes: -1 }) + '\n',
  );
  const bad = hfTrainer(['predict', '--checkpoint', model, '--prompts', prompts, '--out', out]);
  expect(bad.status).toBe(1);
  expect(bad.stderr).toMatch(/^hf-trainer: .*one-prompt\.jsonl:2: maxBytes must be an integer from 0 to 65536\n$/);
  expect(fs.existsSync(out)).toBe(false);
}, 300_000);
