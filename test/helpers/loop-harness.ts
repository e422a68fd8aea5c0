// The set-up every workflow test file repeats: a fresh database, a Temporal client, a scratch home, and
// in-process workers under a queue prefix of their own, with a way to start an inner loop on them.
import type { Client, Connection, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { DbHandle } from '../../db/client';
import type { QueueFamily } from '../../contracts/queues';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { freshDatabase, scratchDir, temporalClient } from './env';
import { uniqueName } from './specs';
import { startTestWorkers, type TestWorkers } from './workers';

export interface LoopWorkers extends TestWorkers {
  /**
   * Registers `spec` as a campaign version, then starts `innerLoop` on it with workflow id `${campaignId}/inner/1`
   * on these workers (the input carries the version id only, as the CLI's does).
   */
  startLoop(campaignId: string, spec: unknown, extra?: Record<string, unknown>): Promise<WorkflowHandleWithFirstExecutionRunId>;
}

export interface LoopHarness {
  db: DbHandle;
  dbUrl: string;
  client: Client;
  home: string;
  /** Registers `spec` as a campaign version (as `flywheel run` does) and returns its id, for a workflow input. */
  version(spec: unknown): Promise<string>;
  /** Workers for `families` (default all) under a new prefix `${label}-xxxxxx`. */
  workers(label: string, families?: QueueFamily[]): Promise<LoopWorkers>;
  close(): Promise<void>;
}

export async function loopHarness(label: string): Promise<LoopHarness> {
  const { url: dbUrl, handle: db } = await freshDatabase(label);
  const { client, connection }: { client: Client; connection: Connection } = await temporalClient();
  const home = scratchDir(label);
  const started: TestWorkers[] = [];
  return {
    db,
    dbUrl,
    client,
    home,
    version: async (spec) => (await registerCampaignVersion(db.db, spec)).versionId,
    async workers(workerLabel, families) {
      const prefix = uniqueName(workerLabel);
      const w = await startTestWorkers({ prefix, db: db.db, home, families });
      started.push(w);
      return {
        ...w,
        startLoop: async (campaignId, spec, extra = {}) => {
          const { versionId } = await registerCampaignVersion(db.db, spec);
          return client.workflow.start('innerLoop', {
            taskQueue: `${prefix}-orchestration`,
            workflowId: `${campaignId}/inner/1`,
            args: [{ campaignVersionId: versionId, ...extra }],
          });
        },
      };
    },
    async close() {
      for (const w of started) await w.stop();
      await connection.close();
      await db.close();
    },
  };
}

/** Polls `fn` until it returns a value (not undefined); fails naming `what` after `timeoutMs`. */
export async function eventually<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
