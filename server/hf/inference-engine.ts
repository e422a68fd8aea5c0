// Which inference server runs a Hugging Face production checkpoint: vLLM's OpenAI-compatible server when the HF
// environment can import vllm and sees a GPU, else Flywheel's transformers server. Both are started through
// formats/hf/serve.py, which checks the folder (safetensors only, no remote code) before either loads it.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { UsageError } from '../../core/errors';

export type InferenceEngine = 'vllm' | 'transformers';
/** `auto`: vLLM when importable and a GPU is present, else transformers. */
export type EngineChoice = 'auto' | InferenceEngine;
export const ENGINE_CHOICES: readonly EngineChoice[] = ['auto', 'vllm', 'transformers'];

/** What the HF environment has, as `serve.py --probe` reports it. */
export interface EngineProbe {
  vllm: boolean;
  gpu: boolean;
}

export const SERVE_PY = path.join(__dirname, '..', '..', 'formats', 'hf', 'serve.py');

/** The engine for `requested` on an environment that has `probe`; asking for vLLM where it cannot run is a UsageError. */
export function chooseEngine(probe: EngineProbe, requested: EngineChoice = 'auto'): InferenceEngine {
  if (requested === 'transformers') return 'transformers';
  const vllmRuns = probe.vllm && probe.gpu;
  if (requested === 'vllm' && !vllmRuns)
    throw new UsageError(`--hf-engine vllm: ${probe.vllm ? 'no GPU is visible' : 'the HF environment cannot import vllm'}`);
  return vllmRuns ? 'vllm' : 'transformers';
}

/** Asks the interpreter what it has (imports torch: a second or two). */
export async function probeEngine(python: string): Promise<EngineProbe> {
  const { stdout } = await promisify(execFile)(python, [SERVE_PY, '--probe'], { timeout: 120_000 });
  const p = JSON.parse(stdout.trim().split('\n').pop()!) as EngineProbe;
  return { vllm: p.vllm === true, gpu: p.gpu === true };
}

export interface InferenceLaunch {
  /** The checkpoint folder. */
  folder: string;
  /** The name requests and replies carry: the checkpoint id. */
  name: string;
  host: string;
  port: number;
  /** The process exits when this one is no longer its parent. */
  parentPid: number;
  /** Flywheel's server: requests generated together at most (vLLM batches by itself). @default 8 */
  maxBatch?: number;
}

/** The interpreter's arguments that start `engine` on a folder. */
export function inferenceArgv(engine: InferenceEngine, l: InferenceLaunch): string[] {
  return [
    SERVE_PY,
    '--engine',
    engine,
    '--model',
    l.folder,
    '--served-model-name',
    l.name,
    '--host',
    l.host,
    '--port',
    String(l.port),
    '--parent-pid',
    String(l.parentPid),
    ...(engine === 'transformers' ? ['--max-batch', String(l.maxBatch ?? 8)] : []),
  ];
}
