// Real `charlm-v1` checkpoints for tests: the built-in trainer (formats/charlm) run in-process for a few steps, the
// checkpoint written as the trainer writes it, and a `checkpoints` row (plus an optional promotion) pointing at it.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { CHARLM_FORMAT, CharLm, decodeCheckpoint, encodeCheckpoint } from '../../formats/charlm/model';
import { trainCharLm } from '../../trainers/charlm/train';
import type { Db } from '../../db/client';
import { campaigns, checkpoints } from '../../db/schema';
import type { CampaignSpec } from '../../core/spec';

export interface TrainedCheckpoint {
  id: string;
  path: string;
  sha256: string;
  /** The model decoded from the written file, as a server would load it. */
  model: CharLm;
}

/** A small model trained for `steps` on `text`, written under `dir`; its row is inserted when `db` is given. */
export async function trainCheckpoint(opts: {
  dir: string;
  id: string;
  text: string;
  seed: number;
  steps: number;
  db?: Db;
  experimentId?: string;
}): Promise<TrainedCheckpoint> {
  const { checkpoint } = trainCharLm({
    text: opts.text,
    params: { context: 4, embed: 8, hidden: 32, batchSize: 16, lr: 0.02, steps: opts.steps, logEvery: 10 },
    seed: opts.seed,
  });
  const bytes = encodeCheckpoint(checkpoint);
  const file = path.join(opts.dir, `${opts.id.replace(/[^A-Za-z0-9._-]+/g, '_')}.ckpt`);
  fs.mkdirSync(opts.dir, { recursive: true });
  fs.writeFileSync(file, bytes);
  const sha256 = crypto.createHash('sha256').update(bytes).digest('hex');
  const c = decodeCheckpoint(fs.readFileSync(file));
  if (opts.db) {
    const runId = opts.id.replace(/\/step-\d+$/, '');
    await opts.db.insert(checkpoints).values({
      id: opts.id,
      runId,
      experimentId: opts.experimentId ?? runId.replace(/\/r\d+$/, ''),
      step: opts.steps,
      path: file,
      sha256,
      format: CHARLM_FORMAT,
    });
  }
  return { id: opts.id, path: file, sha256, model: CharLm.fromParams(c.hyper, c.params) };
}

/** Creates the campaign row when missing (a minimal spec), and points its production checkpoint at `checkpointId`. */
export async function promote(db: Db, campaignId: string, checkpointId: string | null): Promise<void> {
  await db
    .insert(campaigns)
    .values({ id: campaignId, spec: { name: campaignId } as CampaignSpec, specHash: 'test' })
    .onConflictDoNothing();
  await db.update(campaigns).set({ productionCheckpointId: checkpointId }).where(eq(campaigns.id, campaignId));
}
