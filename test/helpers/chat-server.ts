// A local OpenAI-compatible endpoint for agent tests: `POST /v1/chat/completions` on 127.0.0.1, answered by a
// scripted function of the request, with every request kept for assertions. The real `openai` client talks to it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: {
    model: string;
    messages: {
      role: string;
      content: string;
      tool_call_id?: string;
      tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
    }[];
    response_format?: { type: string; json_schema?: { name: string; strict?: boolean; schema: unknown } };
    tools?: { type: string; function: { name: string; parameters: unknown; strict?: boolean } }[];
    tool_choice?: unknown;
  };
}

/**
 * What the script answers: a reply's message content (or a refusal), a forced tool call's arguments, calls to the
 * request's own tools (several in one reply: parallel calls; finish_reason `tool_calls`), a raw HTTP status and body,
 * or any of these after a delay (a slow model; a client that gives up first is counted in `aborted`).
 */
export type ChatReply =
  | { content: string | null; refusal?: string; finishReason?: string }
  | { toolArguments: string }
  | { toolCalls: { name: string; arguments: string }[]; content?: string | null }
  | { status: number; body: unknown; headers?: Record<string, string> }
  | { delayMs: number; reply: ChatReply };

export interface ChatServer {
  /** `http://127.0.0.1:<port>/v1`: the OPENAI_BASE_URL of the tests. */
  baseUrl: string;
  requests: ChatRequest[];
  /** Requests whose client closed the connection before the reply was sent (an aborted request). */
  aborted: ChatRequest[];
  close(): Promise<void>;
}

export async function startChatServer(script: (req: ChatRequest) => ChatReply): Promise<ChatServer> {
  const requests: ChatRequest[] = [];
  const aborted: ChatRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(body));
      };
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions')
        return send(404, { error: { message: `no route ${req.method} ${req.url}` } });
      const r: ChatRequest = {
        method: req.method,
        path: req.url,
        headers: req.headers,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest['body'],
      };
      requests.push(r);
      res.on('close', () => {
        if (!res.writableEnded) aborted.push(r);
      });
      const answer = (reply: ChatReply): void => {
        if ('delayMs' in reply) {
          const t = setTimeout(() => {
            timers.delete(t);
            if (!res.destroyed) answer(reply.reply);
          }, reply.delayMs);
          timers.add(t);
          return;
        }
        if ('status' in reply) return send(reply.status, reply.body, reply.headers);
        const message =
          'toolCalls' in reply
            ? {
                role: 'assistant',
                content: reply.content ?? null,
                refusal: null,
                tool_calls: reply.toolCalls.map((c, i) => ({
                  id: `call_${requests.length}_${i}`,
                  type: 'function',
                  function: { name: c.name, arguments: c.arguments },
                })),
              }
            : 'toolArguments' in reply
              ? {
                  role: 'assistant',
                  content: null,
                  refusal: null,
                  tool_calls: [
                    {
                      id: `call_${requests.length}`,
                      type: 'function',
                      function: { name: r.body.tools?.[0]?.function.name ?? 'tool', arguments: reply.toolArguments },
                    },
                  ],
                }
              : { role: 'assistant', content: reply.content, refusal: reply.refusal ?? null };
        send(200, {
          id: `chatcmpl-${requests.length}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: r.body.model,
          choices: [
            {
              index: 0,
              finish_reason: 'toolArguments' in reply || 'toolCalls' in reply ? 'tool_calls' : (reply.finishReason ?? 'stop'),
              logprobs: null,
              message,
            },
          ],
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
        });
      };
      answer(script(r));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    aborted,
    close: () => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A campaign's script: its n-th request gets the n-th reply (the last one repeats). */
export type GoalScript = ((req: ChatRequest) => ChatReply)[];

/**
 * One server for many campaigns' proposers: each request is answered from the script of the goal in its user
 * message (the proposer's JSON context); a goal without a script gets a 500. Add scripts to `scripts`.
 */
export async function startGoalServer(): Promise<ChatServer & { scripts: Map<string, GoalScript> }> {
  const scripts = new Map<string, GoalScript>();
  const seen = new Map<string, number>();
  const server = await startChatServer((req) => {
    const goal = (JSON.parse(req.body.messages[1].content) as { goal: string }).goal;
    const n = seen.get(goal) ?? 0;
    seen.set(goal, n + 1);
    const replies = scripts.get(goal) ?? [() => ({ status: 500, body: { error: { message: 'no script' } } })];
    return replies[Math.min(n, replies.length - 1)](req);
  });
  return Object.assign(server, { scripts });
}

/** The failure a teacher request carries (the JSON user message). */
export function failureOf(r: ChatRequest): { category: string; prompt: string; output: string; reference: string } {
  return JSON.parse(r.body.messages.find((m) => m.role === 'user')!.content) as ReturnType<typeof failureOf>;
}
