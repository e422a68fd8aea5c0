// Feedback ingestion throughput: events per second through the HTTP API into PostgreSQL, one event per POST
// (16 clients) against batches of 100 (the same clients), and the ratio. Client and server share this process.
// Run: node bin/run-ts.js bench/feedback-throughput.ts [SINGLE_EVENTS] [BATCHED_EVENTS]   (DATABASE_URL: use that server)
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFeedbackServer } from '../server/feedback-server';
import { openDb } from '../db/client';
import { campaigns } from '../db/schema';
import type { CampaignSpec } from '../core/spec';
import { ensureDatabase, startEmbeddedPostgres, type EmbeddedPg } from '../db/embedded-server';
import { applyMigrations } from '../db/migrate';
import { freePort } from '../test/helpers/ports';
import { runBench } from './lib/run-bench';

const CLIENTS = 16;
const BATCH = 100;
const TOKEN = crypto.randomBytes(16).toString('hex');

/** A realistic event: a code prompt and completion of a few hundred bytes. */
function event(run: string, i: number): Record<string, unknown> {
  const kinds = ['accept', 'reject', 'edit', 'rating'] as const;
  const kind = kinds[i % 4];
  return {
    id: `${run}-${i}`,
    campaignId: 'bench',
    kind,
    modelVersion: 'ckpt-42',
    prompt: `def f${i}(xs):\n    """Return the sum of the squares of xs."""\n`.repeat(3),
    output: '    return sum(x * x for x in xs)\n',
    ...(kind === 'edit' ? { correction: '    return sum(x ** 2 for x in xs)\n' } : {}),
    ...(kind === 'rating' ? { rating: 1 + (i % 5) } : {}),
  };
}

/** Sends `bodies` over CLIENTS concurrent loops; returns the seconds taken. */
async function drive(url: string, bodies: string[]): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++];
        const res = await fetch(url, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body,
        });
        if (res.status !== 201) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
      }
    }),
  );
  return (performance.now() - t0) / 1000;
}

async function main(): Promise<void> {
  const nSingle = Number(process.argv[2] ?? 5000);
  const nBatched = Number(process.argv[3] ?? 50_000);
  let pg: EmbeddedPg | undefined;
  let home: string | undefined;
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'flywheel-bench-feedback-'));
    fs.chmodSync(home, 0o755); // the embedded PostgreSQL runs as the `postgres` user when we are root
    pg = await startEmbeddedPostgres({ dataDir: path.join(home, 'pg'), port: await freePort() });
    serverUrl = pg.adminUrl;
  }
  const url = await ensureDatabase(serverUrl, 'flywheel_bench_feedback');
  await applyMigrations(url);
  const db = openDb(url, { max: CLIENTS });
  // The API refuses feedback for a campaign that does not exist.
  await db.db
    .insert(campaigns)
    .values({ id: 'bench', spec: {} as CampaignSpec, specHash: 'bench' })
    .onConflictDoNothing();
  const server = await startFeedbackServer({ db: db.db, port: 0, token: TOKEN });
  try {
    const run = `${Date.now().toString(36)}`;
    const warm = Array.from({ length: 200 }, (_, i) => JSON.stringify(event(`${run}w`, i)));
    await drive(`${server.url}/v1/feedback`, warm);

    const singles = Array.from({ length: nSingle }, (_, i) => JSON.stringify(event(`${run}s`, i)));
    const tSingle = await drive(`${server.url}/v1/feedback`, singles);
    const batches: string[] = [];
    for (let i = 0; i < nBatched; i += BATCH) {
      batches.push(JSON.stringify({ events: Array.from({ length: Math.min(BATCH, nBatched - i) }, (_, j) => event(`${run}b`, i + j)) }));
    }
    const tBatched = await drive(`${server.url}/v1/feedback:batch`, batches);

    const single = nSingle / tSingle;
    const batched = nBatched / tBatched;
    console.log(
      `feedback ingestion over HTTP into PostgreSQL (${CLIENTS} concurrent clients, ${os.cpus().length} CPUs, fsync on, one commit per request)`,
    );
    console.log('mode                 events    seconds    events/s');
    console.log(`single-event POST ${String(nSingle).padStart(9)} ${tSingle.toFixed(2).padStart(10)} ${single.toFixed(0).padStart(11)}`);
    console.log(
      `batches of ${BATCH}    ${String(nBatched).padStart(9)} ${tBatched.toFixed(2).padStart(10)} ${batched.toFixed(0).padStart(11)}`,
    );
    console.log(`ratio batched/single: ${(batched / single).toFixed(1)}x`);
  } finally {
    await server.close();
    await db.close();
    await pg?.stop();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  }
}

runBench(main);
