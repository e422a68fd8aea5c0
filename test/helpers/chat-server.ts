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
    messages: { role: string; content: string }[];
    response_format?: { type: string; json_schema?: { name: string; strict?: boolean; schema: unknown } };
  };
}

/** What the script answers: a reply's message content (or a refusal), or a raw HTTP status and body. */
export type ChatReply = { content: string | null; refusal?: string; finishReason?: string } | { status: number; body: unknown; headers?: Record<string, string> };

export interface ChatServer {
  /** `http://127.0.0.1:<port>/v1`: the OPENAI_BASE_URL of the tests. */
  baseUrl: string;
  requests: ChatRequest[];
  close(): Promise<void>;
}

export async function startChatServer(script: (req: ChatRequest) => ChatReply): Promise<ChatServer> {
  const requests: ChatRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(body));
      };
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return send(404, { error: { message: `no route ${req.method} ${req.url}` } });
      const r: ChatRequest = { method: req.method, path: req.url, headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest['body'] };
      requests.push(r);
      const reply = script(r);
      if ('status' in reply) return send(reply.status, reply.body, reply.headers);
      send(200, {
        id: `chatcmpl-${requests.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: r.body.model,
        choices: [{ index: 0, finish_reason: reply.finishReason ?? 'stop', logprobs: null, message: { role: 'assistant', content: reply.content, refusal: reply.refusal ?? null } }],
        usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The failure a teacher request carries (the JSON user message). */
export function failureOf(r: ChatRequest): { category: string; prompt: string; output: string; reference: string } {
  return JSON.parse(r.body.messages.find((m) => m.role === 'user')!.content) as ReturnType<typeof failureOf>;
}
