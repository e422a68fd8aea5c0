// Completions from a campaign's production checkpoint (`POST /v1/complete` of `flywheel serve`): the model users
// call. The campaign row is read on every request, so a promotion is served from the next request on. A built-in
// (charlm-v1) checkpoint is verified and decoded once, then kept in a small cache by checkpoint id; a Hugging Face
// (hf-causal-lm-v1) folder is served by a warm inference process of its own (server/hf/hf-model-pool.ts).
import fs from 'node:fs';
import { CHARLM_FORMAT, CharLm, decodeCheckpoint, greedyComplete } from '../formats/charlm/model';
import type { CompletionReply, CompletionRequest } from '../core/completion';
import { NotFoundError, FlywheelError, NonRetryableError } from '../core/errors';
import type { Db } from '../db/client';
import { checkpointById, type Checkpoint } from '../services/checkpoints';
import { productionCheckpointOf } from '../services/production-model';
import { checkpointRoot, verifyCheckpoint } from '../services/checkpoint-manifest';
import { HF_CAUSAL_LM_FORMAT } from '../core/job-contract';
import { HfModelPool, type HfModelPoolOptions } from './hf/hf-model-pool';

export interface CompletionServiceOptions {
  db: Db;
  /** Decoded checkpoints kept in memory (least recently used dropped first). @default 4 */
  maxCachedModels?: number;
  /**
   * How Hugging Face checkpoints are served: the HF environment's interpreter, FLYWHEEL_HOME and the engine.
   * @default none: an hf-causal-lm-v1 production checkpoint is answered 501
   */
  hf?: HfModelPoolOptions;
}

/** No campaign has this id (HTTP 404). */
export class CampaignNotFoundError extends NonRetryableError {}

/** The campaign exists but no checkpoint has been promoted to production yet (HTTP 409). */
export class NoProductionModelError extends FlywheelError {}

/** The production checkpoint is in a format this server cannot run (HTTP 501). */
export class UnsupportedCheckpointFormatError extends NonRetryableError {}

function withDefaults(o: CompletionServiceOptions): Required<Omit<CompletionServiceOptions, 'hf'>> {
  return { maxCachedModels: 4, ...o };
}

export class CompletionService {
  private readonly o: Required<Omit<CompletionServiceOptions, 'hf'>>;
  /** Checkpoint id → its model; a promise, so concurrent first requests load the file once. */
  private readonly models = new Map<string, Promise<CharLm>>();
  /** The inference processes of Hugging Face checkpoints; none without `hf`. */
  readonly hf?: HfModelPool;

  constructor(opts: CompletionServiceOptions) {
    this.o = withDefaults(opts);
    if (opts.hf) this.hf = new HfModelPool(opts.hf);
  }

  async complete(req: CompletionRequest): Promise<CompletionReply> {
    const production = await productionCheckpointOf(this.o.db, req.campaignId);
    if (production === undefined) throw new CampaignNotFoundError(`campaign "${req.campaignId}" does not exist`);
    if (!production) {
      throw new NoProductionModelError(
        `campaign "${req.campaignId}" has no promoted model yet: the outer loop promotes one when a candidate passes the gate`,
      );
    }
    const row = await checkpointById(this.o.db, production);
    if (!row) throw new NotFoundError(`production checkpoint "${production}" has no row in checkpoints`);
    if (row.format === HF_CAUSAL_LM_FORMAT && this.hf) return this.hf.complete(req.campaignId, row, req.prompt, req.maxBytes);
    const model = await this.model(row);
    return { completion: greedyComplete(model, req.prompt, req.maxBytes), modelVersion: production };
  }

  /** Stops the inference processes (in-flight requests finish first). */
  async close(): Promise<void> {
    await this.hf?.close();
  }

  /** Checkpoint ids currently decoded in memory, least recently used first. */
  cached(): string[] {
    return [...this.models.keys()];
  }

  private model(row: Checkpoint): Promise<CharLm> {
    const checkpointId = row.id;
    let m = this.models.get(checkpointId);
    if (m) {
      // Re-inserted: Map order is the recency order the eviction reads.
      this.models.delete(checkpointId);
    } else {
      m = this.load(row);
      // A failed load is not cached: the next request tries again (the file may have been restored).
      m.catch(() => this.models.get(checkpointId) === m && this.models.delete(checkpointId));
    }
    this.models.set(checkpointId, m);
    while (this.models.size > this.o.maxCachedModels) this.models.delete(this.models.keys().next().value!);
    return m;
  }

  private async load(row: Checkpoint): Promise<CharLm> {
    const checkpointId = row.id;
    if (row.format !== CHARLM_FORMAT) {
      const formats = this.hf
        ? `${CHARLM_FORMAT} and ${HF_CAUSAL_LM_FORMAT}`
        : `${CHARLM_FORMAT} only (${HF_CAUSAL_LM_FORMAT} needs the HF environment)`;
      throw new UnsupportedCheckpointFormatError(
        `checkpoint "${checkpointId}" is in format "${row.format}"; this server completes with ${formats}`,
      );
    }
    verifyCheckpoint(row.path, row.sha256, `production checkpoint "${checkpointId}"`, checkpointRoot(row));
    const c = decodeCheckpoint(await fs.promises.readFile(row.path));
    return CharLm.fromParams(c.hyper, c.params);
  }
}
