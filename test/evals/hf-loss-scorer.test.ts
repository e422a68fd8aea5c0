// Flywheel's own bits per byte for Hugging Face checkpoints (formats/hf/score_loss.py, through the eval activity's
// loss scorer) against a reference written here, independently: one item at a time, no batching or padding, the
// model's own loss over labels with the prompt masked out (-100), times the label count, in nats turned into bits.
// Both read the same definition of the join (prompt and reference tokenized apart, BOS first when the tokenizer adds
// one; this model's adds none); the reference also checks that the scored tokens decode to exactly the reference
// text. The scorer takes one dtype wherever it runs (float32 unless told) and records it with the result; a cached
// result whose loss was scored in another dtype is scored again rather than compared.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { lossScorerFor, staleLossDtype, type LossItem } from '../../activities/eval/loss-scorers';
import { ContractViolationError } from '../../core/errors';
import { HF_CAUSAL_LM_FORMAT } from '../../core/job-contract';
import { CHARLM_FORMAT } from '../../formats/charlm/model';
import { scoreHfLoss } from '../../formats/hf/score-loss';
import { hfTestPythonPath } from '../helpers/hf-python';
import { requires } from '../helpers/requires';
import { makeTinyHfModel } from '../helpers/tiny-hf-model';

requires('hf');

const REFERENCE = `
import json, math, sys
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
folder, items_file = sys.argv[1], sys.argv[2]
tok = AutoTokenizer.from_pretrained(folder)
model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
out = {}
for line in open(items_file, encoding='utf-8'):
    item = json.loads(line)
    p = tok.encode(item['prompt'])  # the tokenizer's own special tokens: no BOS for this one, and no EOS
    r = tok.encode(item['reference'], add_special_tokens=False)
    assert tok.decode(r) == item['reference'], (tok.decode(r), item['reference'])
    ids = torch.tensor([p + r])
    labels = torch.tensor([[-100] * len(p) + r])
    with torch.no_grad():
        loss = model(input_ids=ids, labels=labels).loss.item()  # mean over the len(r) predicted tokens, in nats
    out[item['id']] = loss * len(r) / math.log(2) / len(item['reference'].encode('utf-8'))
print(json.dumps(out))
`;

const ITEMS: LossItem[] = [
  { id: 'sum', prompt: '17+25=', reference: '42' },
  { id: 'long', prompt: 'What is 123 plus 877? Answer: ', reference: '1000, since 123 + 877 = 1000.' },
  { id: 'utf8', prompt: 'café ', reference: 'naïve — déjà vu ✓' },
  { id: 'space', prompt: 'x = ', reference: ' 7\n' },
  { id: 'one', prompt: 'a', reference: 'b' },
  // The join inside a word: tokenized apart, no token spans it.
  { id: 'mid-word', prompt: 'the naï', reference: 've café' },
  ...Array.from({ length: 20 }, (_, i) => ({ id: `n${i}`, prompt: `${i}*${i + 3}=`, reference: String(i * (i + 3)) })),
];

let dir: string;
let model: string;
/** The first test's scores (the scorer's default dtype, float32), which the dtype test compares with. */
let float32PerItem: Record<string, number> = {};

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-loss-'));
  const text = Array.from({ length: 400 }, (_, i) => `${i % 97}+${(i * 7) % 89}=${(i % 97) + ((i * 7) % 89)} café naïve`).join('\n');
  model = makeTinyHfModel(path.join(dir, 'model'), { text, seed: 3 });
}, 120_000);

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const ctx = () => ({ home: path.join(dir, 'home') });

function withHfPython<T>(fn: () => Promise<T>): Promise<T> {
  const before = process.env.FLYWHEEL_HF_PYTHON;
  process.env.FLYWHEEL_HF_PYTHON = hfTestPythonPath();
  return fn().finally(() => {
    if (before === undefined) delete process.env.FLYWHEEL_HF_PYTHON;
    else process.env.FLYWHEEL_HF_PYTHON = before;
  });
}

test("Flywheel's scorer and an independent reference agree on each item's bits per byte", async () => {
  const scores = await withHfPython(() => lossScorerFor(HF_CAUSAL_LM_FORMAT)!(model, ITEMS, ctx()));
  const itemsFile = path.join(dir, 'items.jsonl');
  fs.writeFileSync(itemsFile, ITEMS.map((i) => JSON.stringify(i)).join('\n') + '\n');
  const reference = JSON.parse(
    execFileSync(hfTestPythonPath(), ['-c', REFERENCE, model, itemsFile], {
      encoding: 'utf8',
      env: { ...process.env, HF_HUB_OFFLINE: '1' },
    })
      .trim()
      .split('\n')
      .pop()!,
  ) as Record<string, number>;
  expect(Object.keys(scores.perItem).sort()).toEqual(ITEMS.map((i) => i.id).sort());
  for (const item of ITEMS) {
    // An untrained model over a 384-token vocabulary: several bits per byte, never zero.
    expect(scores.perItem[item.id]).toBeGreaterThan(0.5);
    expect(Math.abs(scores.perItem[item.id] - reference[item.id])).toBeLessThan(1e-4 * reference[item.id]);
  }
  // The suite's figure weighs items by their bytes.
  const bytes = ITEMS.map((i) => Buffer.byteLength(i.reference));
  const weighted = ITEMS.reduce((s, item, k) => s + reference[item.id] * bytes[k], 0) / bytes.reduce((a, b) => a + b, 0);
  expect(scores.bitsPerByte).toBeCloseTo(weighted, 5);
  expect(scores.dtype).toBe('float32');
  float32PerItem = scores.perItem;
}, 180_000);

test('the scorer loads the weights in the dtype it is given and records it', async () => {
  const half = await scoreHfLoss(model, ITEMS, { python: hfTestPythonPath(), scratchRoot: dir, device: 'cpu', dtype: 'bfloat16' });
  expect(half.map((l) => l.dtype)).toEqual(ITEMS.map(() => 'bfloat16'));
  // bfloat16 weights score differently from the float32 scores above: what a paired comparison must never mix.
  expect(half.some((l) => Math.abs(l.bits / l.bytes - float32PerItem[l.id]) > 1e-4 * float32PerItem[l.id])).toBe(true);
}, 180_000);

test("a cached result whose loss was scored in another dtype than the scorer's now is stale; others are answered", () => {
  const scored = (lossDtype?: string) => ({ metrics: { bits_per_byte: 1.5 }, details: lossDtype ? { lossDtype } : {} });
  expect(staleLossDtype(HF_CAUSAL_LM_FORMAT, scored('float32'))).toBeUndefined();
  expect(staleLossDtype(HF_CAUSAL_LM_FORMAT, scored('bfloat16'))).toBe('its loss was scored in bfloat16, not float32');
  // Recorded before the dtype was: on a GPU it was the checkpoint's own, so it cannot be trusted to match.
  expect(staleLossDtype(HF_CAUSAL_LM_FORMAT, scored())).toBe('its loss was scored in an unrecorded dtype, not float32');
  // charlm-v1 was always scored in this process's float64; a result with no loss items has nothing to mix.
  expect(staleLossDtype(CHARLM_FORMAT, scored())).toBeUndefined();
  expect(staleLossDtype(HF_CAUSAL_LM_FORMAT, { metrics: { pass_rate: 1 }, details: {} })).toBeUndefined();
});

test('a checkpoint folder holding code is refused in one line, as the trainer breaking the contract', async () => {
  const bad = path.join(dir, 'with-code');
  fs.cpSync(model, bad, { recursive: true });
  fs.writeFileSync(path.join(bad, 'modeling_evil.py'), 'raise SystemExit("ran")\n');
  const run = withHfPython(() => lossScorerFor(HF_CAUSAL_LM_FORMAT)!(bad, ITEMS.slice(0, 2), ctx()));
  await expect(run).rejects.toThrow(ContractViolationError);
  await expect(run).rejects.toThrow(/refused .*with-code: score_loss: .*holds code \(modeling_evil\.py\); trust_remote_code is refused$/);
}, 120_000);
