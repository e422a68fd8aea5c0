// An experiment's history events, for the fault suite's checks: its own workflow's history, or, for one run inline
// (innerLoop.experimentWorkflows: inline, so no workflow of its own), its events cut out of its loop's history
// (bench/lib/inline-events.ts, by the experiment id in each runTraining's input) over every run of the loop's
// continue-as-new chain, followed back from the latest run through each start's `continuedExecutionRunId` (histories,
// not the visibility store, which may lag). Each loop's histories are read once.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { inlineExperimentEvents } from '../../bench/lib/inline-events';

export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

export class ExperimentHistories {
  private readonly loops = new Map<string, Promise<Map<string, HistoryEvent[]>>>();

  constructor(private readonly client: Client) {}

  async of(experimentId: string): Promise<HistoryEvent[]> {
    try {
      return (await this.client.workflow.getHandle(experimentId).fetchHistory()).events ?? [];
    } catch (e) {
      // fetchHistory says so as the service's NOT_FOUND (gRPC code 5), describe() as WorkflowNotFoundError.
      const notFound = e instanceof WorkflowNotFoundError || /^5 NOT_FOUND/.test((e as Error).message);
      if (!notFound) throw e;
    }
    const loopId = experimentId.slice(0, experimentId.lastIndexOf('/'));
    let inline = this.loops.get(loopId);
    if (!inline) this.loops.set(loopId, (inline = this.readLoop(loopId)));
    return (await inline).get(experimentId) ?? [];
  }

  /** Each inline experiment's events over the loop's runs (an experiment never spans two: it continues between batches). */
  private async readLoop(loopId: string): Promise<Map<string, HistoryEvent[]>> {
    const out = new Map<string, HistoryEvent[]>();
    let runId: string | undefined; // the latest run first
    do {
      const events: HistoryEvent[] = (await this.client.workflow.getHandle(loopId, runId).fetchHistory()).events ?? [];
      for (const [id, mine] of inlineExperimentEvents(events)) out.set(id, [...mine, ...(out.get(id) ?? [])]);
      runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    } while (runId);
    return out;
  }
}
