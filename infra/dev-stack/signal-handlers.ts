// Keeps a library from taking over the stop signals of `flywheel up`. embedded-postgres registers
// async-exit-hook on first import, which on SIGINT/SIGTERM stops PostgreSQL and calls process.exit() at once —
// before the workers have drained. Its `exit` hook stays: it still stops PostgreSQL if the process dies early.
const STOP_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit'] as const;

/** Runs `fn`, then removes the listeners it added for the stop signals (and `beforeExit`). */
export async function withoutForeignSignalHandlers<T>(fn: () => Promise<T>): Promise<T> {
  const before = new Map(STOP_EVENTS.map((ev) => [ev, new Set(process.listeners(ev as NodeJS.Signals))]));
  try {
    return await fn();
  } finally {
    for (const ev of STOP_EVENTS) {
      for (const l of process.listeners(ev as NodeJS.Signals)) {
        if (!before.get(ev)!.has(l)) process.removeListener(ev, l);
      }
    }
  }
}
