// The one client `flywheel serve` has for its inference processes: the subset of OpenAI's completions API that
// vLLM's OpenAI-compatible server and Flywheel's own transformers server (formats/hf/serve.py) both speak.
import { FlywheelError } from '../../core/errors';

export interface OpenAiCompletionRequest {
  /** The served model's name (the checkpoint id). */
  model: string;
  prompt: string;
  /** Tokens to generate at most. */
  maxTokens: number;
}

export interface OpenAiCompletion {
  text: string;
  /** "stop" (end of sequence) or "length" (the token budget), as the server said. */
  finishReason: string | null;
}

/** The inference server answered with an error; `status` is its HTTP status. */
export class InferenceRequestError extends FlywheelError {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** The inference server could not be reached (refused, reset, closed mid-answer). */
export class InferenceConnectionError extends FlywheelError {}

/** A greedy completion: temperature 0, one choice, no streaming. */
export async function openAiComplete(baseUrl: string, req: OpenAiCompletionRequest, signal?: AbortSignal): Promise<OpenAiCompletion> {
  let res: Response;
  let body: unknown;
  try {
    res = await fetch(`${baseUrl}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: req.model, prompt: req.prompt, max_tokens: req.maxTokens, temperature: 0, n: 1, stream: false }),
      signal,
    });
    body = await res.json().catch(() => undefined);
  } catch (e) {
    throw new InferenceConnectionError(`${baseUrl}: ${causeOf(e)}`, { cause: e });
  }
  if (!res.ok) {
    const message = (body as { error?: { message?: unknown } } | undefined)?.error?.message;
    throw new InferenceRequestError(
      `${baseUrl}: HTTP ${res.status}: ${typeof message === 'string' ? message : 'no error message'}`,
      res.status,
    );
  }
  const choice = (body as { choices?: { text?: unknown; finish_reason?: unknown }[] } | undefined)?.choices?.[0];
  if (typeof choice?.text !== 'string') throw new InferenceRequestError(`${baseUrl}: a reply without choices[0].text`, res.status);
  return { text: choice.text, finishReason: typeof choice.finish_reason === 'string' ? choice.finish_reason : null };
}

/** Whether the server answers `GET /health` with 200 (both servers have it; vLLM's only once the model is loaded). */
export async function isHealthy(baseUrl: string): Promise<boolean> {
  try {
    const res = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(5_000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

function causeOf(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (e as Error).message;
}
