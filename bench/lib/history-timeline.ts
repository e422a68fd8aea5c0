// Splits a workflow's history into where its time went: each activity type's time queued (scheduled →
// started) and running (started → completed), and the rest (workflow tasks, child start and close).
import type { temporal } from '@temporalio/proto';

type Event = temporal.api.history.v1.IHistoryEvent;

const ms = (e: Event) => Number(e.eventTime!.seconds) * 1000 + (e.eventTime!.nanos ?? 0) / 1e6;

export interface Timeline {
  totalMs: number;
  /** `launchTraining.queued`, `launchTraining.running`, ... */
  parts: Record<string, number>;
}

export function timelineOf(events: Event[]): Timeline {
  const scheduled = new Map<number, { type: string; at: number }>();
  const started = new Map<number, number>();
  const parts: Record<string, number> = {};
  const add = (k: string, v: number) => (parts[k] = (parts[k] ?? 0) + v);
  for (const e of events) {
    const id = Number(e.eventId);
    if (e.activityTaskScheduledEventAttributes)
      scheduled.set(id, { type: e.activityTaskScheduledEventAttributes.activityType!.name!, at: ms(e) });
    const st = e.activityTaskStartedEventAttributes;
    if (st) {
      const s = scheduled.get(Number(st.scheduledEventId))!;
      add(`${s.type}.queued`, ms(e) - s.at);
      started.set(Number(st.scheduledEventId), ms(e));
    }
    const done = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes;
    if (done) {
      const s = scheduled.get(Number(done.scheduledEventId))!;
      add(`${s.type}.running`, ms(e) - started.get(Number(done.scheduledEventId))!);
    }
  }
  const totalMs = ms(events[events.length - 1]) - ms(events[0]);
  add('workflow tasks and the rest', totalMs - Object.values(parts).reduce((a, b) => a + b, 0));
  return { totalMs, parts };
}
