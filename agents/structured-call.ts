// One structured-output request to an OpenAI-compatible Chat Completions endpoint: `response_format` with a strict
// JSON schema, or, when the endpoint refuses that (a 400 naming response_format / json_schema), the same schema as
// a forced tool call. No retries here (Temporal's policy owns them); `signal` aborts the HTTP request.
import OpenAI from 'openai';
import { NotACompletionError } from './agent-errors';
import type { AgentMessage, ReplySchema } from './agent-request';
import type { ReplyChoice } from './structured-reply';

export type StructuredMode = 'json_schema' | 'tool';

export interface StructuredResult {
  choice: ReplyChoice;
  mode: StructuredMode;
  tokensIn: number;
  tokensOut: number;
}

export async function requestStructured(
  client: OpenAI,
  req: { model: string; messages: AgentMessage[]; schema: ReplySchema },
  signal?: AbortSignal,
): Promise<StructuredResult> {
  try {
    const c = await client.chat.completions.create(
      { model: req.model, messages: req.messages, response_format: { type: 'json_schema', json_schema: req.schema } },
      { signal },
    );
    return { choice: replyChoice(completion(c), (m) => m.content ?? null), mode: 'json_schema', ...usage(c) };
  } catch (e) {
    if (!refusesJsonSchema(e)) throw e;
  }
  const c = await client.chat.completions.create(
    {
      model: req.model,
      messages: req.messages,
      tools: [
        {
          type: 'function',
          function: { name: req.schema.name, description: req.schema.description, parameters: req.schema.schema, strict: true },
        },
      ],
      tool_choice: { type: 'function', function: { name: req.schema.name } },
    },
    { signal },
  );
  const content = (m: OpenAI.Chat.Completions.ChatCompletionMessage): string | null => {
    const call = m.tool_calls?.find((t) => t.type === 'function' && t.function.name === req.schema.name);
    return call && call.type === 'function' ? call.function.arguments : (m.content ?? null);
  };
  return { choice: replyChoice(completion(c), content), mode: 'tool', ...usage(c) };
}

/** The SDK returns whatever a 200 carried (a proxy's HTML page, say): only a body with a choices array is a completion. */
function completion(c: OpenAI.Chat.Completions.ChatCompletion): OpenAI.Chat.Completions.ChatCompletion {
  if (!Array.isArray((c as { choices?: unknown } | null)?.choices))
    throw new NotACompletionError('the reply is not a chat completion (no choices array)');
  return c;
}

/** The first choice as an agent reads it, its content taken from the message by `content`. */
function replyChoice(
  c: OpenAI.Chat.Completions.ChatCompletion,
  content: (m: OpenAI.Chat.Completions.ChatCompletionMessage) => string | null,
): ReplyChoice {
  const choice = c.choices[0];
  if (!choice) return { noChoices: true, message: { content: null } };
  return { finish_reason: choice.finish_reason, message: { content: content(choice.message), refusal: choice.message.refusal } };
}

function usage(c: OpenAI.Chat.Completions.ChatCompletion): { tokensIn: number; tokensOut: number } {
  return { tokensIn: c.usage?.prompt_tokens ?? 0, tokensOut: c.usage?.completion_tokens ?? 0 };
}

/** A 400 (or 422) whose message names structured outputs: the endpoint lacks them, a tool call may still work. */
function refusesJsonSchema(e: unknown): boolean {
  if (!(e instanceof OpenAI.APIError) || (e.status !== 400 && e.status !== 422)) return false;
  return /response_format|json_schema|structured output/i.test(`${e.message} ${JSON.stringify(e.error ?? '')}`);
}
