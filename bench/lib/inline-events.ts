// An inline experiment's own events (innerLoop.experimentWorkflows: inline), cut out of its loop's history so that a
// bench can time it as it times a child's history: from its first runTraining's scheduling to the local
// finishExperiment that closes it (the marker's completion time). runTraining is told apart by the experimentId in its
// input, its public scoreCheckpoint by the checkpoint its runTraining returned, and the closing marker is the first
// finishExperiment that completes after that scoring. Exact one experiment at a time; with several in flight, another
// experiment's closing marker can come first, so an experiment's time is then a lower bound. An experiment whose
// runTraining recorded its end (outcome.experimentEnded, ENDED_WITH_SCORE) has no finishExperiment: it closes with the
// workflow task that took that result in (the next one completed after it).
import type { temporal } from '@temporalio/proto';
import { ms } from './history-timeline';

type Event = temporal.api.history.v1.IHistoryEvent;

const json = (p: temporal.api.common.v1.IPayloads | null | undefined): Record<string, unknown> =>
  JSON.parse(Buffer.from(p?.payloads?.[0]?.data ?? []).toString('utf8') || '{}') as Record<string, unknown>;

/** Each inline experiment's events, in history order, ending with a copy of its closing marker. */
export function inlineExperimentEvents(loop: Event[]): Map<string, Event[]> {
  const scheduled = new Map<number, { owner?: string; type: string }>();
  const ownerOfCheckpoint = new Map<string, string>();
  const mine = new Map<string, Event[]>();
  const closing: Array<{ atMs: number; event: Event }> = [];
  /** Experiments whose runTraining recorded their end, waiting for the workflow task that takes the result in. */
  const endedInActivity: string[] = [];
  const closed = new Set<string>();
  const add = (owner: string | undefined, e: Event) => owner && (mine.get(owner) ?? mine.set(owner, []).get(owner)!).push(e);
  for (const e of loop) {
    const sc = e.activityTaskScheduledEventAttributes;
    if (sc) {
      const input = json(sc.input);
      const type = sc.activityType?.name ?? '';
      // Public scoring only: the winner's held-out scoring after the search is the loop's, not the experiment's.
      const owner =
        type === 'runTraining'
          ? String(input.experimentId)
          : type === 'scoreCheckpoint' && input.split === 'public'
            ? ownerOfCheckpoint.get(String(input.checkpointId))
            : undefined;
      scheduled.set(Number(e.eventId), { owner, type });
      add(owner, e);
    }
    const started = e.activityTaskStartedEventAttributes;
    if (started) add(scheduled.get(Number(started.scheduledEventId))?.owner, e);
    const done = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes;
    if (done) {
      const s = scheduled.get(Number(done.scheduledEventId));
      add(s?.owner, e);
      const checkpointId = e.activityTaskCompletedEventAttributes
        ? json(e.activityTaskCompletedEventAttributes.result).checkpointId
        : undefined;
      if (s?.type === 'runTraining' && s.owner && typeof checkpointId === 'string') ownerOfCheckpoint.set(checkpointId, s.owner);
      if (
        s?.type === 'runTraining' &&
        s.owner &&
        e.activityTaskCompletedEventAttributes &&
        json(e.activityTaskCompletedEventAttributes.result).experimentEnded === true
      )
        endedInActivity.push(s.owner);
    }
    if (e.workflowTaskCompletedEventAttributes)
      for (const owner of endedInActivity.splice(0)) {
        add(owner, e);
        closed.add(owner);
      }
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_local_activity') {
      const data = json(marker.details?.data) as { activity_type?: string; complete_time?: { seconds: number; nanos?: number } };
      if (data.activity_type === 'finishExperiment' && data.complete_time)
        closing.push({ atMs: data.complete_time.seconds * 1000 + (data.complete_time.nanos ?? 0) / 1e6, event: e });
    }
  }
  for (const [owner, events] of mine) {
    if (closed.has(owner)) continue;
    const last = ms(events[events.length - 1]);
    const close = closing.find((c) => c.atMs >= last);
    if (!close) continue;
    const at = { seconds: Math.floor(close.atMs / 1000), nanos: Math.round((close.atMs % 1000) * 1e6) };
    events.push({ ...close.event, eventTime: at } as unknown as Event);
  }
  return mine;
}
