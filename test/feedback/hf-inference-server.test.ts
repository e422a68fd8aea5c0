// Flywheel's OpenAI-compatible client (server/hf/openai-completions.ts) against Flywheel's own transformers server
// (formats/hf/serve.py) on a real tiny Llama folder, compared with a plain greedy decoder; concurrent requests
// batched; a drain on stop. vLLM's server speaks the same subset but cannot run here (no GPU, not installed): the
// vLLM branch of serve.py is checked up to its exec, into a stand-in module that records the arguments it was given.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { SERVE_PY } from '../../server/hf/inference-engine';
import { InferenceProcess, UnservableCheckpointError } from '../../server/hf/inference-process';
import { InferenceRequestError, openAiComplete } from '../../server/hf/openai-completions';
import { isAlive } from '../../stack/processes';
import { scratchDir } from '../helpers/env';
import { referenceCompletions } from '../helpers/hf-checkpoint';
import { hfTestPythonPath } from '../helpers/hf-python';
import { requires } from '../helpers/requires';
import { makeTinyHfModel } from '../helpers/tiny-hf-model';

requires('hf');
jest.setTimeout(600_000);

const dir = scratchDir('hf-inference-server');
const TEXT = Array.from({ length: 120 }, (_, i) => `let v${i} = [${i}, ${i * 3}];\nconsole.log(v${i});\n`).join('');
// Same-length prompts (in tokens, most likely) are generated together; the others in batches of their own.
const PROMPTS = ['let v', 'console.', 'let v1 = [', '];\n', 'x', 'console.log(v7);\nlet '];
let folder: string;
let proc: InferenceProcess;
const reference = new Map<number, string[]>();

beforeAll(async () => {
  folder = makeTinyHfModel(path.join(dir, 'model'), { text: TEXT, seed: 11 });
  for (const n of [3, 12]) reference.set(n, referenceCompletions(folder, PROMPTS, n));
  proc = await InferenceProcess.start({ python: hfTestPythonPath(), engine: 'transformers', folder, name: 'm/step-0', home: dir });
});
afterAll(async () => {
  await proc?.stop();
});

test('each completion is what a greedy decoder says, up to max_tokens tokens', async () => {
  for (const [i, prompt] of PROMPTS.entries()) {
    const r = await openAiComplete(proc.url, { model: 'm/step-0', prompt, maxTokens: 12 });
    expect(r.text).toBe(reference.get(12)![i]);
    expect(['stop', 'length']).toContain(r.finishReason);
  }
});

test('requests sent together are batched, and each still gets its own greedy completion', async () => {
  const stats = async (): Promise<{ batches: number; requests: number }> =>
    (await (await fetch(`${proc.url}/stats`)).json()) as { batches: number; requests: number };
  const before = await stats();
  const asks = Array.from({ length: 24 }, (_, k) => ({ i: k % PROMPTS.length, n: k % 2 ? 3 : 12 }));
  const texts = await Promise.all(
    asks.map(({ i, n }) => openAiComplete(proc.url, { model: 'm/step-0', prompt: PROMPTS[i], maxTokens: n })),
  );
  texts.forEach((r, k) => expect(r.text).toBe(reference.get(asks[k].n)![asks[k].i]));
  const after = await stats();
  expect(after.requests - before.requests).toBe(asks.length);
  expect(after.batches - before.batches).toBeLessThan(asks.length);
});

test("the server's errors reach the client as one line with the status", async () => {
  await expect(openAiComplete(proc.url, { model: 'another', prompt: 'x', maxTokens: 2 })).rejects.toEqual(
    new InferenceRequestError(`${proc.url}: HTTP 404: The model \`another\` does not exist.`, 404),
  );
  const hot = await fetch(`${proc.url}/v1/completions`, { method: 'POST', body: JSON.stringify({ prompt: 'x', temperature: 0.7 }) });
  expect(hot.status).toBe(400);
  expect(await hot.json()).toEqual({
    error: { message: 'temperature: this server decodes greedily; send 0 or leave it out', type: 'invalid_request_error', code: 400 },
  });
});

test('stop() lets an in-flight request finish, then the process is gone', async () => {
  const p = await InferenceProcess.start({ python: hfTestPythonPath(), engine: 'transformers', folder, name: 'm/step-0', home: dir });
  const inFlight = p.complete(PROMPTS[0], 48);
  const stopped = p.stop();
  expect(p.usable).toBe(false);
  expect((await inFlight).text).toBe(referenceCompletions(folder, [PROMPTS[0]], 48)[0]);
  await stopped;
  expect(isAlive(p.pid)).toBe(false);
});

test('a folder asking for remote code never starts: one line, before anything is loaded', async () => {
  const evil = path.join(dir, 'evil');
  fs.cpSync(folder, evil, { recursive: true });
  fs.writeFileSync(path.join(evil, 'tokenizer_config.json'), JSON.stringify({ auto_map: { AutoTokenizer: ['tok.EvilTokenizer', null] } }));
  await expect(
    InferenceProcess.start({ python: hfTestPythonPath(), engine: 'transformers', folder: evil, name: 'evil/step-1', home: dir }),
  ).rejects.toEqual(
    new UnservableCheckpointError(
      'checkpoint "evil/step-1": tokenizer_config.json: asks for remote code (auto_map); trust_remote_code is refused',
    ),
  );
});

describe('the vLLM branch of serve.py, up to vLLM itself', () => {
  // A stand-in `vllm` package that writes the arguments it was started with and exits: vLLM is not installed here.
  const standIn = path.join(dir, 'vllm-stand-in');
  const argvFile = path.join(dir, 'vllm-argv.json');
  beforeAll(() => {
    const pkg = path.join(standIn, 'vllm', 'entrypoints', 'openai');
    fs.mkdirSync(pkg, { recursive: true });
    for (const d of ['vllm', 'vllm/entrypoints', 'vllm/entrypoints/openai']) fs.writeFileSync(path.join(standIn, d, '__init__.py'), '');
    fs.writeFileSync(
      path.join(pkg, 'api_server.py'),
      `import json, sys\njson.dump(sys.argv[1:], open(${JSON.stringify(argvFile)}, 'w'))\n`,
    );
  });
  const run = (model: string): Promise<{ code: number; stderr: string }> =>
    promisify(execFile)(
      hfTestPythonPath(),
      [SERVE_PY, '--engine', 'vllm', '--model', model, '--port', '5999', '--served-model-name', 'c/step-2'],
      { env: { ...process.env, PYTHONPATH: standIn } },
    ).then(
      (r) => ({ code: 0, stderr: r.stderr }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
    );

  test('a checked folder is handed to vLLM with safetensors only and no remote code', async () => {
    fs.rmSync(argvFile, { force: true });
    expect((await run(folder)).code).toBe(0);
    const argv = JSON.parse(fs.readFileSync(argvFile, 'utf8')) as string[];
    expect(argv).toEqual([
      '--model',
      folder,
      '--served-model-name',
      'c/step-2',
      '--host',
      '127.0.0.1',
      '--port',
      '5999',
      '--load-format',
      'safetensors',
      '--seed',
      '0',
    ]);
  });

  test('a folder with code is refused before vLLM is started', async () => {
    const evil = path.join(dir, 'evil-vllm');
    fs.cpSync(folder, evil, { recursive: true });
    fs.writeFileSync(path.join(evil, 'modeling_x.py'), '');
    fs.rmSync(argvFile, { force: true });
    const r = await run(evil);
    expect(r).toEqual({ code: 2, stderr: `serve.py: ${evil}: holds code (modeling_x.py); trust_remote_code is refused\n` });
    expect(fs.existsSync(argvFile)).toBe(false);
  });
});
