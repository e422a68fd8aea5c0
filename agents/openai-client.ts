// The OpenAI-compatible client every agent shares, built from the worker's environment. Retries are Temporal's
// job (the activity retry policy, with backoff and a visible attempt count), so the SDK's own retries are off.
import OpenAI from 'openai';

/** The part of the environment an agent reads. */
export interface AgentEnv {
  OPENAI_API_KEY?: string;
  /** An OpenAI-compatible endpoint (vLLM, Ollama, a gateway). @default the SDK's, https://api.openai.com/v1 */
  OPENAI_BASE_URL?: string;
}

export interface OpenAiClientOptions {
  /** One request's limit, in milliseconds; a timeout is a retryable error. @default 30000 */
  timeoutMs?: number;
}

/** Endpoints that need no key (a local vLLM, say) still get a non-empty one: the SDK refuses to start without. */
const NO_KEY = 'unused';

/** Whether the environment names an endpoint at all: a key, a base URL, or both. */
export function hasEndpoint(env: AgentEnv): boolean {
  return Boolean(env.OPENAI_API_KEY || env.OPENAI_BASE_URL);
}

export function openAiClient(env: AgentEnv, opts: OpenAiClientOptions = {}): OpenAI {
  return new OpenAI({
    apiKey: env.OPENAI_API_KEY || NO_KEY,
    baseURL: env.OPENAI_BASE_URL || undefined,
    maxRetries: 0,
    timeout: opts.timeoutMs ?? 30_000,
  });
}
