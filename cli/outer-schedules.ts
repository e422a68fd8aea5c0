// The Temporal Schedule that runs a campaign's outer loop: its id, its action, its timing and its policies.
// One schedule per campaign, and overlap SKIP: a fire while an iteration still runs is skipped, never run beside it.
import {
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleDescription,
  type ScheduleHandle,
  type ScheduleOptions,
  type ScheduleSpec,
  type ScheduleSpecDescription,
} from '@temporalio/client';
import { taskQueue } from '../contracts/queues';
import type { OuterLoopInput } from '../contracts/outer-loop';
import { loopSearchAttributes, OUTER_LOOP_TYPE } from '../services/campaign-loops';
import { formatDuration } from './duration';
import type { Endpoints } from '../stack/endpoints';
import { UsageError } from './errors';

const SUFFIX = '/outer';

/** `demo/outer` */
export const outerScheduleId = (campaignId: string): string => `${campaignId}${SUFFIX}`;

/** The campaign of an outer-loop schedule id, or undefined for any other schedule. */
export const campaignOfSchedule = (scheduleId: string): string | undefined =>
  scheduleId.endsWith(SUFFIX) ? scheduleId.slice(0, -SUFFIX.length) : undefined;

/**
 * How late a missed fire (the server was down) may still run. Long enough to ride out a restart, short enough
 * that an iteration does not start hours after its slot; with SKIP at most one runs anyway.
 */
export const CATCHUP_WINDOW = '1h';

export const OUTER_SCHEDULE_POLICIES = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: CATCHUP_WINDOW } as const;

/** When it fires: every `everyMs`, or at the times of a cron expression. */
export type OuterTiming = { everyMs: number } | { cron: string };

/** The cron text rides in the calendar's comment: the server compiles cron into calendars and keeps only that. */
const CRON_COMMENT = 'cron: ';

export function scheduleSpecOf(t: OuterTiming): ScheduleSpec {
  return 'everyMs' in t ? { intervals: [{ every: t.everyMs }] } : { cronExpressions: [`${t.cron} # ${CRON_COMMENT}${t.cron}`] };
}

/** The spec as it was given: `every 1d` or `cron "0 3 * * *"` (anything else as the server describes it). */
export function describeTiming(spec: ScheduleSpecDescription): string {
  const parts = [
    ...(spec.intervals ?? []).map((i) => `every ${formatDuration(i.every)}`),
    ...(spec.calendars ?? []).map((c) =>
      c.comment?.startsWith(CRON_COMMENT) ? `cron "${c.comment.slice(CRON_COMMENT.length)}"` : `calendar ${JSON.stringify(c)}`,
    ),
  ];
  return parts.join(', ') || 'never';
}

/**
 * Each fire starts one outer-loop iteration; the server appends the fire time to the workflow id. With a campaign
 * version (`schedule create --spec`), every fire runs that version; without, each iteration runs the campaign's latest.
 */
export function outerScheduleAction(campaignId: string, e: Endpoints, campaignVersionId?: string): ScheduleOptions['action'] {
  const input: OuterLoopInput = { campaignId, trigger: 'schedule', ...(campaignVersionId !== undefined ? { campaignVersionId } : {}) };
  return {
    type: 'startWorkflow',
    workflowType: OUTER_LOOP_TYPE,
    taskQueue: taskQueue('orchestration', e.taskQueuePrefix),
    workflowId: `${campaignId}/outer/scheduled`,
    args: [input],
    typedSearchAttributes: loopSearchAttributes(campaignId, 'outer'),
  };
}

/** The campaign's schedule and its description; a UsageError naming the campaign when there is none. */
export async function requireOuterSchedule(
  client: Client,
  campaignId: string,
): Promise<{ handle: ScheduleHandle; desc: ScheduleDescription }> {
  const handle = client.schedule.getHandle(outerScheduleId(campaignId));
  try {
    return { handle, desc: await handle.describe() };
  } catch (err) {
    if (err instanceof ScheduleNotFoundError)
      throw new UsageError(
        `no schedule for campaign "${campaignId}" (create one with \`flywheel schedule create ${campaignId} --every 1d\`)`,
      );
    throw err;
  }
}
