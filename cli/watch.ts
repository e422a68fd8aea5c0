// Follows an inner loop until it ends, redrawing its progress; Ctrl-C detaches (the workflow keeps running).
import type { WorkflowHandle } from '@temporalio/client';
import type { Db } from '../db/client';
import type { InnerLoopResult } from '../contracts/inner-loop';
import { snapshot } from './loop-progress';
import { renderSnapshot } from './progress-view';

export type WatchOutcome = { kind: 'done'; result: InnerLoopResult } | { kind: 'detached' };

export interface WatchOptions {
  metric: string;
  /** Steps of a run whose params do not say. @default 0 */
  defaultSteps?: number;
  /** Redraw interval. @default 1000 */
  intervalMs?: number;
  out?: NodeJS.WriteStream;
  /** Resolves when the user asks to detach (Ctrl-C). */
  detach: Promise<void>;
}

export async function watchLoop(handle: WorkflowHandle, db: Db, opts: WatchOptions): Promise<WatchOutcome> {
  const out = opts.out ?? process.stdout;
  const tty = out.isTTY === true;
  let drawn = 0;
  let lastText = '';
  const detached = opts.detach.then((): WatchOutcome => ({ kind: 'detached' }));
  const result = handle.result().then((r: InnerLoopResult): WatchOutcome => ({ kind: 'done', result: r }));
  // A loop that fails before the first snapshot is drawn (its trainer cannot start) must not reject unhandled meanwhile.
  result.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let inFlight: Promise<void> = Promise.resolve();
  const draw = async () => {
    if (stopped) return;
    try {
      const text = renderSnapshot(await snapshot(handle, db, opts.defaultSteps), opts.metric);
      if (tty) {
        if (drawn) out.write(`\x1b[${drawn}A\x1b[J`);
        out.write(text + '\n');
        drawn = text.split('\n').length;
      } else if (headline(text) !== headline(lastText)) {
        // A log gets a snapshot when a result lands or the best changes, not every second for the ETA's sake.
        out.write(text + '\n');
      }
      lastText = text;
    } catch {
      /* a query can fail while the workflow continues as new or closes; the next tick retries */
    }
    if (!stopped) timer = setTimeout(() => void (inFlight = draw()), opts.intervalMs ?? 1000);
  };
  await (inFlight = draw());
  try {
    return await Promise.race([result, detached]);
  } finally {
    // The caller closes the connection next: no query may still be in flight (grpc would throw from a timer).
    stopped = true;
    clearTimeout(timer);
    await inFlight;
  }
}

const headline = (text: string) => text.split('\n')[0].replace(/ {2}ETA .*$/, '');
