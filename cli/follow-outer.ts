// Following an outer loop from the CLI: poll its `outerStatus` query, print each phase change and any promotion
// awaiting approval, until it ends or Ctrl-C detaches. Shared by `flywheel outer` and `flywheel status`.
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { setTimeout as sleep } from 'node:timers/promises';
import { outerStatusQuery, type OuterLoopResult, type OuterLoopStatus } from '../contracts/outer-loop';
import { endReason } from '../services/loop-failures';
import { formatEvidence, phaseLine } from './outer-view';

/** `failed` covers every end but completion: failed, terminated, cancelled, timed out (`status` says which). */
export type OuterOutcome =
  { kind: 'detached' } | { kind: 'completed'; result: OuterLoopResult } | { kind: 'failed'; status: string; reason: string };

export interface FollowOuterOptions {
  campaignId: string;
  /** Resolves when the user asks to detach (Ctrl-C). */
  detach: Promise<void>;
  /** Where progress goes. @default process.stdout */
  out?: NodeJS.WritableStream;
  /** Time between two status queries. @default 1000 */
  pollMs?: number;
}

/** How long a status query may wait for a worker to answer. */
export const STATUS_QUERY_TIMEOUT_MS = 5_000;

/** The loop's status, or undefined when no worker answers in time (none running, or between two runs). */
export async function queryOuterStatus(handle: WorkflowHandle, timeoutMs = STATUS_QUERY_TIMEOUT_MS): Promise<OuterLoopStatus | undefined> {
  try {
    return await handle.client.connection.withDeadline(Date.now() + timeoutMs, () => handle.query(outerStatusQuery));
  } catch {
    return undefined;
  }
}

export async function followOuterLoop(handle: WorkflowHandle, opts: FollowOuterOptions): Promise<OuterOutcome> {
  const out = opts.out ?? process.stdout;
  const pollMs = opts.pollMs ?? 1000;
  const ended: Promise<OuterOutcome> = (handle.result() as Promise<OuterLoopResult>).then(
    (result) => ({ kind: 'completed', result }),
    async (error: Error) => ({
      kind: 'failed',
      status: (await handle.describe().catch(() => undefined))?.status.name ?? 'FAILED',
      // Temporal wraps the reason (the failure, the termination's reason) in `cause`: where it failed and its innermost cause.
      reason: error instanceof WorkflowFailedError ? endReason(error) : error.message,
    }),
  );
  const stop = Promise.race([ended, opts.detach.then((): OuterOutcome => ({ kind: 'detached' }))]);
  let lastLine = '';
  let lastEvidence = '';
  for (;;) {
    const st = await Promise.race([queryOuterStatus(handle), stop.then(() => undefined)]);
    if (st) {
      const line = phaseLine(st);
      if (line !== lastLine) out.write(`${new Date().toISOString().slice(11, 19)}  ${line}\n`);
      lastLine = line;
      const pending = st.awaitingApproval?.outerIterationId ?? '';
      if (st.awaitingApproval && pending !== lastEvidence) out.write(`${formatEvidence(st.awaitingApproval, opts.campaignId)}\n`);
      lastEvidence = pending;
    }
    const outcome = await Promise.race([stop, sleep(pollMs, undefined, { ref: false })]);
    if (outcome) return outcome;
  }
}
