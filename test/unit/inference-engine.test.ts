// Which server runs a Hugging Face production checkpoint. vLLM cannot run on this machine (no GPU, not installed),
// so its branch is tested here as a choice and an argument list; formats/hf/serve.py's exec into it is tested in
// test/feedback/hf-inference-server.test.ts against a stand-in module that records its arguments.
import { chooseEngine, inferenceArgv, SERVE_PY } from '../../server/hf/inference-engine';
import { UsageError } from '../../core/errors';

test.each([
  [{ vllm: true, gpu: true }, 'vllm'],
  [{ vllm: true, gpu: false }, 'transformers'],
  [{ vllm: false, gpu: true }, 'transformers'],
  [{ vllm: false, gpu: false }, 'transformers'],
] as const)('auto on %j is %s: vLLM only when importable and a GPU is present', (probe, engine) => {
  expect(chooseEngine(probe)).toBe(engine);
  expect(chooseEngine(probe, 'auto')).toBe(engine);
  expect(chooseEngine(probe, 'transformers')).toBe('transformers');
});

test('asking for vLLM where it cannot run is a usage error naming what is missing', () => {
  expect(chooseEngine({ vllm: true, gpu: true }, 'vllm')).toBe('vllm');
  expect(() => chooseEngine({ vllm: false, gpu: true }, 'vllm')).toThrow(
    new UsageError('--hf-engine vllm: the HF environment cannot import vllm'),
  );
  expect(() => chooseEngine({ vllm: true, gpu: false }, 'vllm')).toThrow(new UsageError('--hf-engine vllm: no GPU is visible'));
});

test('both engines start through serve.py, which checks the folder first; no remote code is ever asked for', () => {
  const launch = { folder: '/ck/step-3', name: 'c1/r1/step-3', host: '127.0.0.1', port: 4321, parentPid: 77 };
  for (const engine of ['vllm', 'transformers'] as const) {
    const argv = inferenceArgv(engine, launch);
    expect(argv[0]).toBe(SERVE_PY);
    expect(argv.slice(1)).toEqual([
      '--engine',
      engine,
      '--model',
      '/ck/step-3',
      '--served-model-name',
      'c1/r1/step-3',
      '--host',
      '127.0.0.1',
      '--port',
      '4321',
      '--parent-pid',
      '77',
      ...(engine === 'transformers' ? ['--max-batch', '8'] : []),
    ]);
    expect(argv.join(' ')).not.toMatch(/trust.remote.code/);
  }
});
