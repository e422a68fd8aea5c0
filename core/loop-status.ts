// The one status a page shows for a loop. The database records what the loop last wrote (`running` until it writes
// its end); Temporal knows when its workflow failed, was terminated, cancelled or timed out before it could. Where
// they disagree the workflow's end wins, so no page says "running" beside "FAILED". Pure.

/** Temporal's names for a workflow that ended without completing. */
export const ENDED_WITHOUT_COMPLETING: readonly string[] = ['FAILED', 'TERMINATED', 'CANCELLED', 'TIMED_OUT'];

/** The workflow's status when it ended without completing, else the recorded one (`stopped` says more than COMPLETED). */
export function shownLoopStatus(recorded: string, workflow: string | undefined): string {
  return workflow !== undefined && ENDED_WITHOUT_COMPLETING.includes(workflow) ? workflow : recorded;
}
