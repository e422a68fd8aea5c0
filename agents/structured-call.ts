// One structured-output request to an OpenAI-compatible Chat Completions endpoint: `response_format` with a strict
// JSON schema, or, when the endpoint refuses that (a 400 naming response_format / json_schema), the same schema as
// a forced tool call. A request may offer tools of its own (the proposer's analyst): with `response_format` the
// model may call them instead of replying (their calls come back in `toolCalls`), and an endpoint that refuses
// tools is asked again without them. No retries here (Temporal's policy owns them); `signal` aborts the request.
import OpenAI from 'openai';
import { NotACompletionError } from './agent-errors';
import type { AgentMessage, AgentTool, ReplySchema, ToolCall } from './agent-request';
import type { ReplyChoice } from './structured-reply';

export type StructuredMode = 'json_schema' | 'tool';

export interface StructuredResult {
  choice: ReplyChoice;
  mode: StructuredMode;
  tokensIn: number;
  tokensOut: number;
}

export interface StructuredRequest {
  model: string;
  messages: AgentMessage[];
  schema: ReplySchema;
  tools?: AgentTool[];
  toolChoice?: 'auto' | 'none';
}

export async function requestStructured(client: OpenAI, req: StructuredRequest, signal?: AbortSignal): Promise<StructuredResult> {
  // The request's own tools (the proposer's analyst), unless the endpoint refuses tools: then it replies without them.
  let tools = req.tools?.length ? req.tools.map(functionTool) : undefined;
  for (;;) {
    try {
      const c = await client.chat.completions.create(
        {
          model: req.model,
          messages: req.messages,
          response_format: { type: 'json_schema', json_schema: req.schema },
          ...(tools ? { tools, tool_choice: req.toolChoice ?? 'auto' } : {}),
        },
        { signal },
      );
      return { choice: replyChoice(completion(c), (m) => m.content ?? null, toolCallsOf), mode: 'json_schema', ...usage(c) };
    } catch (e) {
      if (refusesJsonSchema(e)) break;
      // A vLLM started without --enable-auto-tool-choice, say. Only before any tool was answered: a conversation that
      // holds tool messages needs the tools it called.
      if (tools && refusesTools(e) && !req.messages.some((m) => m.role === 'tool')) {
        tools = undefined;
        continue;
      }
      throw e;
    }
  }
  // The forced reply function; the request's tools stay listed (earlier tool messages refer to them), never called.
  const c = await client.chat.completions.create(
    {
      model: req.model,
      messages: req.messages,
      tools: [
        {
          type: 'function',
          function: { name: req.schema.name, description: req.schema.description, parameters: req.schema.schema, strict: true },
        },
        ...(tools ?? []),
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

/** A tool as Chat Completions takes it: a strict function. */
function functionTool(t: AgentTool): OpenAI.Chat.Completions.ChatCompletionFunctionTool {
  return { type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters, strict: true } };
}

/** The message's function calls, as an agent reads them; none when it made none. */
function toolCallsOf(m: OpenAI.Chat.Completions.ChatCompletionMessage): ToolCall[] {
  return (m.tool_calls ?? []).flatMap((t) =>
    t.type === 'function' ? [{ id: t.id, name: t.function.name, arguments: t.function.arguments }] : [],
  );
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
  toolCalls?: (m: OpenAI.Chat.Completions.ChatCompletionMessage) => ToolCall[],
): ReplyChoice {
  const choice = c.choices[0];
  if (!choice) return { noChoices: true, message: { content: null } };
  const calls = toolCalls?.(choice.message) ?? [];
  return {
    finish_reason: choice.finish_reason,
    message: { content: content(choice.message), refusal: choice.message.refusal, ...(calls.length > 0 ? { toolCalls: calls } : {}) },
  };
}

function usage(c: OpenAI.Chat.Completions.ChatCompletion): { tokensIn: number; tokensOut: number } {
  return { tokensIn: c.usage?.prompt_tokens ?? 0, tokensOut: c.usage?.completion_tokens ?? 0 };
}

/** A 400 (or 422) whose message names tools or tool choice: the endpoint takes no tools, a plain reply may still work. */
function refusesTools(e: unknown): boolean {
  if (!(e instanceof OpenAI.APIError) || (e.status !== 400 && e.status !== 422)) return false;
  return /\btools?\b|tool_choice|tool[ _-]call|function call/i.test(`${e.message} ${JSON.stringify(e.error ?? '')}`);
}

/** A 400 (or 422) whose message names structured outputs: the endpoint lacks them, a tool call may still work. */
function refusesJsonSchema(e: unknown): boolean {
  if (!(e instanceof OpenAI.APIError) || (e.status !== 400 && e.status !== 422)) return false;
  return /response_format|json_schema|structured output/i.test(`${e.message} ${JSON.stringify(e.error ?? '')}`);
}
