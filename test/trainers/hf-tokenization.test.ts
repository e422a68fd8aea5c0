// One tokenization for the HF model's four readers: training (SFT rows and DPO pairs), predict, Flywheel's loss scorer
// and its completion server each run their own code on the same examples, for tokenizers with and without BOS and
// with and without a chat template (test/helpers/hf_tokenization_paths.py, real tokenizers built from a config, a
// stand-in model that records the ids it reads); any two that read different prompt or completion tokens, or a BOS
// read twice, fail it.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { hfTestPythonPath } from '../helpers/hf-python';
import { requires } from '../helpers/requires';

requires('hf');

test('training, predict, the scorer and the server read the same tokens, BOS once, for plain and chat tokenizers', () => {
  const r = spawnSync(hfTestPythonPath(), [path.join(__dirname, '..', 'helpers', 'hf_tokenization_paths.py')], {
    encoding: 'utf8',
    timeout: 180_000,
    env: { ...process.env, HF_HUB_OFFLINE: '1', OMP_NUM_THREADS: '1' },
  });
  const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { checked: number; disagreements: string[] };
  expect(out.disagreements).toEqual([]);
  // 5 examples for each of 4 tokenizers, and a system+user chat for each of the 2 with a template.
  expect(out.checked).toBe(22);
  expect(r.status).toBe(0);
}, 200_000);
