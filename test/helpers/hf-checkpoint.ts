// Real hf-causal-lm-v1 checkpoints for the serving tests: a tiny Llama (tiny-hf-model.ts), optionally trained a few
// plain torch steps on a text, written into a run folder as the contract says (checkpoints/step-<N>/ renamed into
// place, then manifest.json replaced), with its `checkpoints` row; and a reference greedy decoder to compare with.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Db } from '../../db/client';
import { checkpoints } from '../../db/schema';
import { HF_CAUSAL_LM_FORMAT, MANIFEST_FILE, type CheckpointEntry } from '../../core/job-contract';
import { sha256Folder } from '../../services/checkpoint-manifest';
import { hfTestPythonPath } from './hf-python';

const FORMATS_HF = path.join(__dirname, '..', '..', 'formats', 'hf');

/** A few AdamW steps on random windows of the text, so the result answers differently from where it started. */
const TRAIN = `
import json, sys, torch
from transformers import AutoModelForCausalLM, AutoTokenizer
src, out, text_file, steps, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
torch.manual_seed(seed)
tok = AutoTokenizer.from_pretrained(src)
model = AutoModelForCausalLM.from_pretrained(src)
ids = torch.tensor(tok(open(text_file, encoding='utf-8').read())['input_ids'])
opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
model.train()
for _ in range(steps):
    starts = torch.randint(0, len(ids) - 65, (8,))
    batch = torch.stack([ids[s:s + 64] for s in starts])
    loss = model(input_ids=batch, labels=batch).loss
    opt.zero_grad(); loss.backward(); opt.step()
model.save_pretrained(out, safe_serialization=True)
tok.save_pretrained(out)
print(json.dumps({'loss': loss.item()}))
`;

/** Greedy decoding one forward pass per token, no KV cache, no generate(): the reference the servers must match. */
const REFERENCE = `
import json, sys, torch
sys.path.insert(0, sys.argv[1])
from frozen_model import load_frozen
model, tok = load_frozen(sys.argv[2])
prompts, max_tokens = json.loads(sys.argv[3]), int(sys.argv[4])
eos = model.generation_config.eos_token_id
eos = set(eos if isinstance(eos, list) else [eos])
texts = []
with torch.inference_mode():
    for prompt in prompts:
        ids = tok(prompt)['input_ids'] or [tok.bos_token_id]
        new = []
        for _ in range(max_tokens):
            t = int(model(torch.tensor([ids + new])).logits[0, -1].argmax())
            new.append(t)
            if t in eos:
                break
        texts.append(tok.decode(new, skip_special_tokens=True))
print(json.dumps(texts))
`;

/** Trains a copy of the model in `src` for `steps` on `text` into `out`; returns the last loss. */
export function trainHfCopy(src: string, out: string, text: string, steps: number, seed = 0): number {
  const textFile = `${out}.train-text.txt`;
  fs.writeFileSync(textFile, text);
  try {
    const stdout = execFileSync(hfTestPythonPath(), ['-c', TRAIN, src, out, textFile, String(steps), String(seed)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return (JSON.parse(stdout.trim().split('\n').pop()!) as { loss: number }).loss;
  } finally {
    fs.rmSync(textFile, { force: true });
  }
}

/** What a greedy decoder says after each prompt, `maxTokens` tokens at most (stopping at EOS). */
export function referenceCompletions(folder: string, prompts: string[], maxTokens: number): string[] {
  const stdout = execFileSync(hfTestPythonPath(), ['-c', REFERENCE, FORMATS_HF, folder, JSON.stringify(prompts), String(maxTokens)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return JSON.parse(stdout.trim().split('\n').pop()!) as string[];
}

export interface HfCheckpoint {
  id: string;
  /** The folder `checkpoints/step-<N>` (absolute). */
  path: string;
  sha256: string;
}

/**
 * Copies the model folder `src` into `<runDir>/checkpoints/step-<step>/` (under a temporary name, renamed into place),
 * lists it in the run's manifest (replaced atomically) and inserts its row; `id` is `<runId>/step-<step>`.
 */
export async function writeHfCheckpoint(o: { db: Db; runDir: string; runId: string; step: number; src: string }): Promise<HfCheckpoint> {
  const dir = path.join(o.runDir, 'checkpoints');
  const folder = path.join(dir, `step-${o.step}`);
  const tmp = path.join(dir, `.tmp-step-${o.step}`);
  fs.mkdirSync(dir, { recursive: true });
  fs.cpSync(o.src, tmp, { recursive: true });
  fs.renameSync(tmp, folder);
  const { sha256, files } = sha256Folder(folder);
  const manifestFile = path.join(o.runDir, MANIFEST_FILE);
  const listed: CheckpointEntry[] = fs.existsSync(manifestFile)
    ? (JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as { checkpoints: CheckpointEntry[] }).checkpoints
    : [];
  const entry: CheckpointEntry = { path: `checkpoints/step-${o.step}`, sha256, files, step: o.step, format: HF_CAUSAL_LM_FORMAT };
  fs.writeFileSync(`${manifestFile}.tmp`, JSON.stringify({ checkpoints: [...listed, entry] }, null, 2));
  fs.renameSync(`${manifestFile}.tmp`, manifestFile);
  const id = `${o.runId}/step-${o.step}`;
  await o.db.insert(checkpoints).values({
    id,
    runId: o.runId,
    experimentId: o.runId.replace(/\/r\d+$/, ''),
    step: o.step,
    path: folder,
    sha256,
    format: HF_CAUSAL_LM_FORMAT,
  });
  return { id, path: folder, sha256 };
}
