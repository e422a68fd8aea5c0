// The warm inference processes behind `flywheel serve` for Hugging Face checkpoints, one per served checkpoint,
// and which one answers each campaign. On a promotion (the campaign's production checkpoint changes) the new
// checkpoint's process starts while the old one keeps answering; new requests switch to the new one once it answers
// /health, the old one finishes what it has in flight and is stopped. A process that crashes is started again by
// the next request (a request it dropped is sent once more); `close()` stops them all.
import { FlywheelError } from '../../core/errors';
import { utf8Prefix } from '../../core/utf8-prefix';
import { verifyCheckpoint } from '../../services/checkpoint-manifest';
import { chooseEngine, probeEngine, type EngineChoice, type InferenceEngine } from './inference-engine';
import { InferenceExitedError, InferenceProcess, InferenceStartError, UnservableCheckpointError } from './inference-process';

export interface HfModelPoolOptions {
  /** The HF environment's interpreter (stack/hf-env.ts hfPython). */
  python: string;
  /** FLYWHEEL_HOME: the processes' logs go to `<home>/logs/`. */
  home: string;
  /** Which server runs the checkpoints. @default "auto": vLLM when importable and a GPU is present, else transformers */
  engine?: EngineChoice;
  /** How long a process may take to load before its start fails. @default 600000 */
  readyTimeoutMs?: number;
  /** Where the pool's one-line notices go (a process started, crashed, stopped). @default console.error */
  log?: (line: string) => void;
}

/** A checkpoint as the pool needs it: its row's id, folder and digest. */
export interface HfCheckpoint {
  id: string;
  path: string;
  sha256: string;
}

/** The pool is closed (`serve` is shutting down). */
export class PoolClosedError extends FlywheelError {}

interface Entry {
  started: Promise<InferenceProcess>;
  /** Set once started. */
  proc?: InferenceProcess;
}

export class HfModelPool {
  private readonly o: Required<HfModelPoolOptions>;
  /** Checkpoint id → its process, starting or started. */
  private readonly entries = new Map<string, Entry>();
  /** Campaign → the checkpoint whose process answers its requests. */
  private readonly serving = new Map<string, string>();
  /** Campaign → its production checkpoint, as the last request read it. */
  private readonly wanted = new Map<string, string>();
  /** Checkpoint id → why its (verified, so unchanging) folder cannot be served. */
  private readonly refused = new Map<string, UnservableCheckpointError>();
  private readonly stopping = new Set<Promise<void>>();
  private engine?: Promise<InferenceEngine>;
  private closed = false;

  constructor(opts: HfModelPoolOptions) {
    this.o = { engine: 'auto', readyTimeoutMs: 600_000, log: (l) => console.error(l), ...opts };
  }

  /**
   * A greedy completion of `prompt` cut to `maxBytes` bytes, for `campaignId` whose production checkpoint is
   * `checkpoint`; `modelVersion` is the checkpoint that answered (the previous one while the new one loads).
   */
  async complete(
    campaignId: string,
    checkpoint: HfCheckpoint,
    prompt: string,
    maxBytes: number,
  ): Promise<{ completion: string; modelVersion: string }> {
    for (let attempt = 0; ; attempt++) {
      const proc = await this.route(campaignId, checkpoint);
      try {
        // One token is at least one byte for the byte-level tokenizers in use; 0 still asks for one token, so a
        // request for nothing meets the same errors as any other.
        const r = await proc.complete(prompt, Math.max(1, maxBytes));
        return { completion: utf8Prefix(r.text, maxBytes), modelVersion: proc.name };
      } catch (e) {
        // Greedy completions are reads: one dropped by a crash is sent again, to the restarted process.
        if (!(e instanceof InferenceExitedError) || attempt > 0) throw e;
      }
    }
  }

  /** The processes running now, for `serve`'s log and the tests. */
  processes(): { checkpointId: string; pid: number; engine: InferenceEngine; usable: boolean }[] {
    return [...this.entries.values()]
      .map((e) => e.proc)
      .filter((p): p is InferenceProcess => p !== undefined)
      .map((p) => ({ checkpointId: p.name, pid: p.pid, engine: p.engine, usable: p.usable }));
  }

  /** Stops every process (letting in-flight requests finish) and refuses new requests. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all([...all.map((e) => e.started.then((p) => p.stop()).catch(() => undefined)), ...this.stopping]);
  }

  /** The process to send this request to. Synchronous from the choice to the caller's `complete`, so a drain counts it. */
  private async route(campaignId: string, checkpoint: HfCheckpoint): Promise<InferenceProcess> {
    if (this.closed) throw new PoolClosedError('the completion server is shutting down');
    const refusal = this.refused.get(checkpoint.id);
    if (refusal) throw refusal;
    this.wanted.set(campaignId, checkpoint.id);
    const entry = this.ensure(checkpoint);
    if (entry.proc?.usable) {
      this.switchTo(campaignId, checkpoint.id);
      return entry.proc;
    }
    // The new checkpoint is loading: the one that served this campaign so far answers meanwhile.
    const current = this.serving.get(campaignId);
    const old = current === undefined ? undefined : this.entries.get(current)?.proc;
    if (old?.usable) return old;
    const proc = await entry.started;
    if (this.closed) throw new PoolClosedError('the completion server is shutting down');
    if (!proc.usable) {
      // It died or was released between its start and now: a fresh entry (never this one again) serves.
      if (this.entries.get(checkpoint.id) === entry) this.entries.delete(checkpoint.id);
      return this.route(campaignId, checkpoint);
    }
    if (this.wanted.get(campaignId) === checkpoint.id) this.switchTo(campaignId, checkpoint.id);
    return proc;
  }

  private ensure(checkpoint: HfCheckpoint): Entry {
    const existing = this.entries.get(checkpoint.id);
    if (existing) return existing;
    const entry: Entry = { started: this.start(checkpoint) };
    this.entries.set(checkpoint.id, entry);
    entry.started.then(
      (proc) => {
        entry.proc = proc;
        if (this.closed) return;
        // Every campaign that wants it now switches to it; a process nobody wants any more (promoted past while it
        // loaded) is stopped.
        for (const [campaign, id] of this.wanted) if (id === checkpoint.id) this.switchTo(campaign, id);
        this.releaseIfUnused(checkpoint.id);
      },
      (e: unknown) => {
        if (this.entries.get(checkpoint.id) === entry) this.entries.delete(checkpoint.id);
        if (e instanceof UnservableCheckpointError) this.refused.set(checkpoint.id, e);
        this.o.log(`flywheel serve: ${(e as Error).message}`);
      },
    );
    return entry;
  }

  private async start(checkpoint: HfCheckpoint): Promise<InferenceProcess> {
    verifyCheckpoint(checkpoint.path, checkpoint.sha256, `production checkpoint "${checkpoint.id}"`);
    this.engine ??= probeEngine(this.o.python).then((p) => chooseEngine(p, this.o.engine));
    const engine = await this.engine.catch((e: unknown) => {
      this.engine = undefined;
      // `--hf-engine vllm` where vLLM cannot run, or an interpreter that cannot even probe: a start that failed.
      throw new InferenceStartError(
        `inference process for checkpoint "${checkpoint.id}" not started: ${(e as Error).message.split('\n')[0]}`,
        { cause: e },
      );
    });
    const proc = await InferenceProcess.start({
      python: this.o.python,
      engine,
      folder: checkpoint.path,
      name: checkpoint.id,
      home: this.o.home,
      readyTimeoutMs: this.o.readyTimeoutMs,
      onCrash: (p, how) => this.crashed(p, how),
    });
    this.o.log(`flywheel serve: inference process for checkpoint "${checkpoint.id}" ready (pid ${proc.pid}, ${engine}, ${proc.url})`);
    return proc;
  }

  private crashed(p: InferenceProcess, how: string): void {
    const entry = this.entries.get(p.name);
    if (entry?.proc === p) this.entries.delete(p.name);
    this.o.log(
      `flywheel serve: inference process for checkpoint "${p.name}" (pid ${p.pid}) exited unexpectedly (${how}); the next request starts it again (log: ${p.logFile})`,
    );
  }

  private switchTo(campaignId: string, checkpointId: string): void {
    const previous = this.serving.get(campaignId);
    if (previous === checkpointId) return;
    this.serving.set(campaignId, checkpointId);
    if (previous !== undefined) this.releaseIfUnused(previous);
  }

  /** Stops a checkpoint's process once no campaign is served by it or waiting for it. */
  private releaseIfUnused(checkpointId: string): void {
    for (const m of [this.serving, this.wanted]) for (const id of m.values()) if (id === checkpointId) return;
    const entry = this.entries.get(checkpointId);
    if (!entry?.proc) return;
    this.entries.delete(checkpointId);
    const proc = entry.proc;
    const stopped = proc
      .stop()
      .then(() => this.o.log(`flywheel serve: inference process for checkpoint "${checkpointId}" stopped (pid ${proc.pid})`));
    this.stopping.add(stopped);
    void stopped.finally(() => this.stopping.delete(stopped));
  }
}
