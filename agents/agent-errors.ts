// What can go wrong when an agent asks a model, classified for Temporal's retry rules. Messages are one line and
// never carry the API key or the endpoint's address (redact() scrubs what an endpoint echoes back).
import { APIConnectionError, APIError } from 'openai';
import { FlywheelError, NonRetryableError } from '../core/errors';

/** A reply that cannot be used: not JSON, not the schema, a refusal, cut off. Asking again the same way rarely helps. */
export class UnusableReplyError extends NonRetryableError {}

/** The endpoint is busy or unreachable (429, 408, 409, 5xx, a timeout, a refused connection): retryable. */
export class AgentUnavailableError extends FlywheelError {}

/** The endpoint refused the request itself (a bad key, an unknown model, a malformed request): not retryable. */
export class AgentRequestError extends NonRetryableError {}

/** A 200 whose body is no chat completion (a gateway's error page, say): the endpoint is not answering as one; retryable. */
export class NotACompletionError extends FlywheelError {}

const RETRYABLE_STATUS = new Set([408, 409, 429]);

/** The SDK's error as one of ours; `secrets` (the key, the base URL) are scrubbed from the message. */
export function classifyAgentError(e: unknown, what: string, secrets: (string | null | undefined)[]): Error {
  if (e instanceof NotACompletionError) return new AgentUnavailableError(redact(`${what}: ${e.message}`, secrets));
  if (e instanceof APIConnectionError) return new AgentUnavailableError(redact(`${what}: ${e.message.split('\n')[0]}`, secrets));
  if (e instanceof APIError && typeof e.status === 'number') {
    const msg = redact(`${what}: HTTP ${e.status}${e.error ? ` ${summary(e.error)}` : ''}`, secrets);
    return RETRYABLE_STATUS.has(e.status) || e.status >= 500 ? new AgentUnavailableError(msg) : new AgentRequestError(msg);
  }
  if (e instanceof Error) return e;
  return new Error(redact(`${what}: ${String(e)}`, secrets));
}

function summary(body: object): string {
  const m = (body as { message?: unknown }).message;
  return (typeof m === 'string' ? m : JSON.stringify(body)).replace(/\s+/g, ' ').slice(0, 200);
}

export function redact(text: string, secrets: (string | null | undefined)[]): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join('[redacted]');
  // Keys in the usual shape, even when the endpoint echoes only a part of them.
  return out.replace(/\bsk-[A-Za-z0-9_*-]{4,}/g, 'sk-[redacted]');
}

/** The campaign's agents have used `agents.maxTokens`: no more agent calls (the built-in roles take over). */
export class TokenBudgetExceededError extends NonRetryableError {}
