// The eval worker's warm predict servers, per campaign and trainer: up to `perCampaign` processes each, started on
// demand, reused across the campaign's experiments, ended when idle or after `maxRequests`. A request that finds
// every server busy waits its turn. Only public splits come here (score-checkpoint.ts): a process that has seen a
// held-out or probe prompt never answers anything else.
import type { PredictPrompt } from '../../core/job-contract';
import type { TrainerSetup } from '../training/trainer-isolation';
import { PredictServer, type ServeOptions } from './predict-server';

export interface PredictServersOptions {
  /** Servers at once per campaign and trainer (each answers one request at a time; FLYWHEEL_WARM_PREDICT_SERVERS). @default 2 */
  perCampaign?: number;
  /** A server with nothing to do for this long is ended. @default 60000 */
  idleMs?: number;
  /** Requests one server answers before it is replaced (a leak in a trainer's predict stays bounded). @default 1000 */
  maxRequests?: number;
  /** Where each server's scratch folder is made (its cwd, bound read-write). @default predictScratchRoot() */
  scratchRoot?: string;
}

interface Group {
  key: string;
  setup: TrainerSetup;
  idle: PredictServer[];
  busy: Set<PredictServer>;
  waiters: { resolve: (s: PredictServer) => void; reject: (e: unknown) => void }[];
  timers: Map<PredictServer, NodeJS.Timeout>;
}

export class PredictServers {
  private readonly perCampaign: number;
  private readonly idleMs: number;
  private readonly maxRequests: number;
  private readonly scratchRoot: string | undefined;
  private readonly groups = new Map<string, Group>();
  /** Servers started since this pool was made: what a test or a bench reads to see reuse. */
  started = 0;
  /** Requests sent to a server since this pool was made, failed ones included. */
  requests = 0;

  constructor(opts: PredictServersOptions = {}) {
    this.perCampaign = opts.perCampaign ?? 2;
    this.idleMs = opts.idleMs ?? 60_000;
    this.maxRequests = opts.maxRequests ?? 1000;
    this.scratchRoot = opts.scratchRoot;
  }

  /** `prompts` answered from `checkpoint` by a warm server of `campaignId`'s trainer (`setup`). */
  async predict(
    campaignId: string,
    setup: TrainerSetup,
    checkpoint: string,
    prompts: PredictPrompt[],
    opts: ServeOptions = {},
  ): Promise<Map<string, string>> {
    const group = this.groupOf(campaignId, setup);
    const server = await this.acquire(group);
    this.requests++;
    try {
      return await server.predict(checkpoint, prompts, opts);
    } finally {
      this.release(group, server);
    }
  }

  /** Ends every server (a worker shutting down, a test's end). */
  close(): void {
    for (const g of this.groups.values()) {
      for (const t of g.timers.values()) clearTimeout(t);
      for (const s of [...g.idle, ...g.busy]) s.close();
    }
    this.groups.clear();
  }

  /** Servers running now, busy or idle. */
  get running(): number {
    return [...this.groups.values()].reduce((n, g) => n + g.idle.length + g.busy.size, 0);
  }

  private groupOf(campaignId: string, setup: TrainerSetup): Group {
    // A campaign's versions may change the trainer: each its own servers.
    const key = JSON.stringify([campaignId, setup.trainer, setup.hide, setup.home, setup.recipeDir ?? null]);
    let g = this.groups.get(key);
    if (!g) this.groups.set(key, (g = { key, setup, idle: [], busy: new Set(), waiters: [], timers: new Map() }));
    return g;
  }

  private async acquire(g: Group): Promise<PredictServer> {
    for (let s = g.idle.pop(); s; s = g.idle.pop()) {
      clearTimeout(g.timers.get(s));
      g.timers.delete(s);
      if (s.alive) return this.take(g, s);
      s.close();
    }
    if (g.busy.size < this.perCampaign) return this.take(g, this.start(g));
    return new Promise<PredictServer>((resolve, reject) => g.waiters.push({ resolve, reject }));
  }

  private release(g: Group, s: PredictServer): void {
    g.busy.delete(s);
    const waiter = g.waiters.shift();
    if (s.alive && s.served < this.maxRequests) {
      if (waiter) waiter.resolve(this.take(g, s));
      else this.park(g, s);
      return;
    }
    s.close();
    if (!waiter) return;
    try {
      waiter.resolve(this.take(g, this.start(g)));
    } catch (e) {
      waiter.reject(e); // a server that cannot start (no sandbox, no program): the waiting request fails
    }
  }

  /** Idle until the next request, or ended after idleMs. */
  private park(g: Group, s: PredictServer): void {
    g.idle.push(s);
    const timer = setTimeout(() => {
      g.timers.delete(s);
      g.idle = g.idle.filter((x) => x !== s);
      s.close();
      if (g.idle.length + g.busy.size + g.waiters.length === 0) this.groups.delete(g.key);
    }, this.idleMs);
    timer.unref();
    g.timers.set(s, timer);
  }

  private start(g: Group): PredictServer {
    this.started++;
    return new PredictServer(g.setup, this.scratchRoot);
  }

  private take(g: Group, s: PredictServer): PredictServer {
    g.busy.add(s);
    return s;
  }
}

let shared: PredictServers | undefined;

/** The process's pool, ended when the process exits (a server also ends on its own when its stdin closes). */
export function sharedPredictServers(): PredictServers {
  if (!shared) {
    const pool = (shared = new PredictServers());
    process.once('exit', () => pool.close());
  }
  return shared;
}
