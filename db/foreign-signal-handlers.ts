// Keeps a library from taking over the process lifecycle of `flywheel up`. embedded-postgres registers
// async-exit-hook on first import, which on SIGINT/SIGTERM stops PostgreSQL and calls process.exit() at once —
// before the workers have drained — and whose `exit` hook throws "done is not a function" at every exit.
// Whoever starts the server stops it (flywheel up's stack.ts, the test teardown).
const STOP_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'] as const;

/** Runs `fn`, then removes the listeners it added for process lifecycle events. */
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
