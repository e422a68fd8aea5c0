// The job contract's warm protocols' loop (core/job-contract.ts PredictRequest, TrainRequest): one JSON request a line
// on stdin, handled, then one reply line on stdout, `{"id", "ok": true}` or `{"id", "ok": false, "error": "<one
// line>"}`, until stdin ends. A request that fails is answered with its reason and the process keeps serving.
import readline from 'node:readline';

export async function serveRequests<R extends { id: string }>(
  handle: (req: R) => void,
  onError?: (message: string) => void,
): Promise<void> {
  for await (const line of readline.createInterface({ input: process.stdin })) {
    if (!line.trim()) continue;
    const req = JSON.parse(line) as R;
    let reply: { id: string; ok: boolean; error?: string };
    try {
      handle(req);
      reply = { id: req.id, ok: true };
    } catch (err) {
      const message = (err as Error).message.split('\n')[0];
      onError?.(message);
      reply = { id: req.id, ok: false, error: message };
    }
    process.stdout.write(JSON.stringify(reply) + '\n');
  }
}
