// Splits a workflow's history into where its time went: each activity type's time queued (scheduled →
// started) and running (started → completed), and the rest (workflow tasks, child start and close). Intervals set
// apart (a trainer's run, a wait) are carved out of whatever they overlap and reported under their own label.
import type { temporal } from '@temporalio/proto';

type Event = temporal.api.history.v1.IHistoryEvent;

/** An event's time, epoch ms. */
export const ms = (e: Event) => Number(e.eventTime!.seconds) * 1000 + (e.eventTime!.nanos ?? 0) / 1e6;

export interface Timeline {
  totalMs: number;
  /** `launchTraining.queued`, `launchTraining.running`, ..., one per label set apart, and `workflow tasks and the rest`. */
  parts: Record<string, number>;
}

/** One activity call as the history records it (epoch ms); `startedMs`/`endedMs` are absent until it starts/ends. */
export interface ActivitySpan {
  type: string;
  taskQueue: string;
  scheduledMs: number;
  startedMs?: number;
  endedMs?: number;
}

/** An interval (epoch ms) to report apart; those given together must not overlap one another. */
export interface SetApart {
  label: string;
  fromMs: number;
  toMs: number;
}

export function activitySpans(events: Event[]): ActivitySpan[] {
  const byScheduled = new Map<number, ActivitySpan>();
  for (const e of events) {
    const sc = e.activityTaskScheduledEventAttributes;
    if (sc) byScheduled.set(Number(e.eventId), { type: sc.activityType!.name!, taskQueue: sc.taskQueue?.name ?? '', scheduledMs: ms(e) });
    const st = e.activityTaskStartedEventAttributes;
    if (st) byScheduled.get(Number(st.scheduledEventId))!.startedMs = ms(e);
    const done = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes;
    if (done) byScheduled.get(Number(done.scheduledEventId))!.endedMs = ms(e);
  }
  return [...byScheduled.values()];
}

export function timelineOf(events: Event[], apart: SetApart[] = []): Timeline {
  const start = ms(events[0]);
  const end = ms(events[events.length - 1]);
  const parts: Record<string, number> = {};
  const add = (k: string, v: number) => (parts[k] = (parts[k] ?? 0) + v);
  const overlap = (from: number, to: number) =>
    apart.reduce((sum, a) => sum + Math.max(0, Math.min(to, a.toMs) - Math.max(from, a.fromMs)), 0);
  for (const a of apart) add(a.label, Math.max(0, Math.min(end, a.toMs) - Math.max(start, a.fromMs)));
  for (const s of activitySpans(events)) {
    if (s.startedMs === undefined) continue;
    add(`${s.type}.queued`, s.startedMs - s.scheduledMs - overlap(s.scheduledMs, s.startedMs));
    if (s.endedMs !== undefined) add(`${s.type}.running`, s.endedMs - s.startedMs - overlap(s.startedMs, s.endedMs));
  }
  const totalMs = end - start;
  add('workflow tasks and the rest', totalMs - Object.values(parts).reduce((a, b) => a + b, 0));
  return { totalMs, parts };
}
