// How every bench ends: on success as its main returns; on failure with the cause in one line (the bench's name, the
// error's class and first line, never `undefined` or a stack) and exit code 1, after what it started is stopped (its
// own `finally` blocks, and stopOnSignal for Ctrl-C).
import path from 'node:path';

/** One line for any thrown value: `Error: message` (first line), the cause's too when the message is bare. */
export function causeLine(e: unknown): string {
  if (e instanceof AggregateError && e.errors.length > 0) return `${e.name}: ${e.errors.map(causeLine).join('; ')}`;
  if (e instanceof Error) {
    const first = e.message
      .split('\n')
      .find((l) => l.trim().length > 0)
      ?.trim();
    const cause = e.cause === undefined ? '' : ` (cause: ${causeLine(e.cause)})`;
    return `${e.name}: ${first ?? '(no message)'}${cause}`;
  }
  const text = typeof e === 'string' ? e : JSON.stringify(e);
  return text === undefined ? `a thrown ${typeof e} with no message` : text.split('\n')[0];
}

/** Runs `main`; a failure prints `<bench>: <cause>` and exits 1. */
export function runBench(main: () => void | Promise<void>): void {
  Promise.resolve()
    .then(main)
    .catch((e: unknown) => {
      console.error(`${path.basename(process.argv[1] ?? 'bench', '.ts')}: ${causeLine(e)}`);
      if (process.env.FLYWHEEL_BENCH_TRACE) console.error(e);
      process.exit(1);
    });
}

/**
 * Stops `stop` on Ctrl-C or SIGTERM before the process ends (a bench stopped by hand leaves no server behind); the
 * returned function removes the handlers once the bench stopped it itself.
 */
export function stopOnSignal(stop: () => Promise<void>): () => void {
  const handler = (signal: NodeJS.Signals) => {
    console.error(`${signal}: stopping what the bench started`);
    void stop().finally(() => process.exit(130));
  };
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}

export interface Started {
  /** Adds what stops one thing the bench started (a server, a pool, a folder). */
  add(stop: () => Promise<void>): void;
  /** Stops everything added, newest first, once (a failure to stop one is printed and the rest still stop). */
  stop(): Promise<void>;
}

/**
 * What a bench started, stopped newest first by stop(), or on Ctrl-C or SIGTERM until then (stopOnSignal), so a bench
 * that fails or is stopped halfway leaves no server behind. `what` names it in a failure to stop.
 */
export function startedList(what: string): Started {
  const started: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of started.splice(0).reverse()) await stop().catch((e: unknown) => console.error(`stopping ${what}: ${causeLine(e)}`));
  };
  const forgetSignals = stopOnSignal(stopAll);
  return {
    add: (stop) => void started.push(stop),
    async stop() {
      forgetSignals();
      await stopAll();
    },
  };
}
