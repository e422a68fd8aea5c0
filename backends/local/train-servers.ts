// The training worker's warm trainers (`trainer.warmTrain`), per key (campaign, trainer, dataset, warm start: what
// the server's sandbox was made with): started on demand, one run at a time each, reused for the key's next run,
// ended when idle or after `maxRuns`. There is no cap of their own: a run holds a capacity slot while it is served,
// so the campaign's `backend.maxConcurrent` bounds the servers busy at once.
import type { ResourceLimits } from '../../core/resource-limits';
import { TrainServer, type ServerCommand } from './train-server';

export interface TrainServersOptions {
  /** A server with nothing to do for this long is ended. @default 30000 */
  idleMs?: number;
  /** Runs one server serves before it is replaced (a leak in a trainer stays bounded). @default 500 */
  maxRuns?: number;
}

/** What a served launch asks of the pool. */
export interface ServeRequest {
  /** Runs of one key may share a server: the same sandbox, the same program. */
  key: string;
  command: ServerCommand;
  /** Where its servers' folders are made (under FLYWHEEL_HOME, hidden from every other sandbox). */
  root: string;
}

export class TrainServers {
  private readonly idleMs: number;
  private readonly maxRuns: number;
  private readonly idle = new Map<string, TrainServer[]>();
  private readonly busy = new Set<TrainServer>();
  private readonly timers = new Map<TrainServer, NodeJS.Timeout>();
  /** Servers started since this pool was made: what a test or a bench reads to see reuse. */
  started = 0;

  constructor(opts: TrainServersOptions = {}) {
    this.idleMs = opts.idleMs ?? 30_000;
    this.maxRuns = opts.maxRuns ?? 500;
  }

  /**
   * Starts the run on an idle server of its key, or on a new one, and returns the server's pid, the launch recorded in
   * `launchDir`. The server goes back to the pool when the run's end is recorded.
   */
  serve(req: ServeRequest, runDir: string, launchDir: string, limits: ResourceLimits | undefined): number {
    const server = this.take(req);
    let ended: Promise<void>;
    try {
      ({ ended } = server.start(runDir, launchDir, limits));
    } catch (e) {
      this.busy.delete(server);
      server.close();
      throw e;
    }
    void ended.then(() => this.release(req.key, server));
    return server.pid;
  }

  /** Ends every server (a worker shutting down, a test's end). */
  close(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    for (const s of [...[...this.idle.values()].flat(), ...this.busy]) s.close();
    this.idle.clear();
    this.busy.clear();
  }

  /** Servers running now, busy or idle. */
  get running(): number {
    return this.busy.size + [...this.idle.values()].reduce((n, l) => n + l.length, 0);
  }

  private take(req: ServeRequest): TrainServer {
    const list = this.idle.get(req.key) ?? [];
    for (let s = list.pop(); s; s = list.pop()) {
      clearTimeout(this.timers.get(s));
      this.timers.delete(s);
      if (s.alive) {
        this.busy.add(s);
        return s;
      }
      s.close();
    }
    this.started++;
    const s = new TrainServer(req.command, req.root);
    this.busy.add(s);
    return s;
  }

  private release(key: string, s: TrainServer): void {
    this.busy.delete(s);
    if (!s.alive || s.served >= this.maxRuns) return s.close();
    const list = this.idle.get(key) ?? [];
    list.push(s);
    this.idle.set(key, list);
    const timer = setTimeout(() => {
      this.timers.delete(s);
      const rest = (this.idle.get(key) ?? []).filter((x) => x !== s);
      if (rest.length > 0) this.idle.set(key, rest);
      else this.idle.delete(key);
      s.close();
    }, this.idleMs);
    timer.unref();
    this.timers.set(s, timer);
  }
}

let shared: TrainServers | undefined;

/** The process's pool, ended when the process exits (a sandboxed server also dies with its worker: --die-with-parent). */
export function sharedTrainServers(): TrainServers {
  if (!shared) {
    const pool = (shared = new TrainServers());
    process.once('exit', () => pool.close());
  }
  return shared;
}
