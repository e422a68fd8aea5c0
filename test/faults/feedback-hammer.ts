// The HTTP feedback API under concurrent writes while faults land: 8 clients, each event sent 1–3 times (a
// client's retry after a lost answer), each send retried until answered 2xx.
import { setTimeout as sleep } from 'node:timers/promises';

export interface FeedbackWrites {
  sent: Set<string>;
  accepted: Set<string>;
}

export async function writeFeedback(url: string, campaignId: string, count: number, rnd: () => number): Promise<FeedbackWrites> {
  const sent = new Set<string>();
  const accepted = new Set<string>();
  const queue = Array.from({ length: count }, (_, i) => ({ id: `fb-${campaignId}-${i}`, copies: 1 + Math.floor(rnd() * 3) }));
  const client = async (): Promise<void> => {
    for (let job = queue.shift(); job; job = queue.shift()) {
      const event = { id: job.id, campaignId, kind: 'accept', modelVersion: 'm0', prompt: `p${job.id}`, output: 'o' };
      for (let copy = 0; copy < job.copies; copy++) {
        for (let tries = 0; ; tries++) {
          sent.add(job.id);
          const status = await fetch(`${url}/v1/feedback`, {
            method: 'POST',
            body: JSON.stringify(event),
            signal: AbortSignal.timeout(15_000),
          }).then(
            (r) => r.status,
            () => 0,
          );
          if (status === 200 || status === 201) {
            accepted.add(job.id);
            break;
          }
          if (status !== 0 && status !== 503) throw new Error(`feedback ${job.id}: HTTP ${status}`);
          if (tries > 600) throw new Error(`feedback ${job.id}: no answer after ${tries} tries`);
          await sleep(100);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, client));
  return { sent, accepted };
}
