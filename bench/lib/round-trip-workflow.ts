// The orchestration bench's peer: a workflow that only makes round trips to an activity that does nothing but sleep
// the given time (0 for most), one call per entry on the task queue given, in order: the floor any workflow making
// those calls pays on this Temporal server and worker before doing any work of its own. A call on the workflow's own
// task queue may be dispatched eagerly, as Temporal does.
import { proxyActivities } from '@temporalio/workflow';

export interface RoundTripCall {
  taskQueue: string;
  sleepMs: number;
}

export interface RoundTripActivities {
  pause(ms: number): Promise<void>;
}

export async function roundTrips(calls: RoundTripCall[]): Promise<void> {
  for (const c of calls)
    await proxyActivities<RoundTripActivities>({ taskQueue: c.taskQueue, startToCloseTimeout: '1 minute' }).pause(c.sleepMs);
}
