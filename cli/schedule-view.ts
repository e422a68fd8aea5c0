// What `flywheel schedule list|describe` print: one row per outer-loop schedule, as JSON or as text.
import type { ScheduleDescription } from '@temporalio/client';
import { campaignOfSchedule, describeTiming } from './outer-schedules';

export interface ScheduleRow {
  id: string;
  campaign: string;
  /** `every 1d` or `cron "0 3 * * *"` */
  spec: string;
  paused: boolean;
  note?: string;
  /** ISO time of the next fire, when there is one. */
  nextRun?: string;
  /** The most recent fires (oldest first): when, and the workflow each started. */
  lastActions: { at: string; workflowId: string }[];
  /** Workflow ids of the iterations this schedule started that still run (at most one: overlap SKIP). */
  running: string[];
  actionsTaken: number;
  skippedOverlap: number;
  overlap: string;
}

/** How many recent fires a row keeps. */
const LAST_ACTIONS = 3;

export function scheduleRow(d: ScheduleDescription): ScheduleRow {
  return {
    id: d.scheduleId,
    campaign: campaignOfSchedule(d.scheduleId) ?? d.scheduleId,
    spec: describeTiming(d.spec),
    paused: d.state.paused,
    note: d.state.note || undefined,
    nextRun: d.state.paused ? undefined : d.info.nextActionTimes[0]?.toISOString(),
    lastActions: d.info.recentActions
      .slice(-LAST_ACTIONS)
      .map((a) => ({ at: a.takenAt.toISOString(), workflowId: a.action.workflow.workflowId })),
    running: d.info.runningActions.map((a) => a.workflow.workflowId),
    actionsTaken: d.info.numActionsTaken,
    skippedOverlap: d.info.numActionsSkippedOverlap,
    overlap: d.policies.overlap ?? 'unspecified',
  };
}

/** One line per schedule under a header. */
export function formatScheduleTable(rows: ScheduleRow[]): string {
  if (rows.length === 0) return 'no outer-loop schedules (create one with `flywheel schedule create CAMPAIGN --every 1d`)';
  const cells = rows.map((r) => [
    r.campaign,
    r.spec,
    r.paused ? 'paused' : 'active',
    r.nextRun ?? '-',
    r.lastActions.at(-1)?.at ?? '-',
    r.running[0] ?? '-',
  ]);
  const header = ['campaign', 'spec', 'state', 'next run', 'last run', 'running'];
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  return [header, ...cells]
    .map((c) =>
      c
        .map((v, i) => v.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** Every field of one schedule, a line each. */
export function formatScheduleDetail(r: ScheduleRow): string {
  return [
    `schedule ${r.id} (campaign ${r.campaign})`,
    `  spec:      ${r.spec}, overlap ${r.overlap}`,
    `  state:     ${r.paused ? 'paused' : 'active'}${r.note ? ` (${r.note})` : ''}`,
    `  next run:  ${r.nextRun ?? '-'}`,
    `  fired:     ${r.actionsTaken} times; skipped ${r.skippedOverlap} while an iteration ran`,
    ...r.lastActions.map((a) => `  ran:       ${a.at}  ${a.workflowId}`),
    `  running:   ${r.running.join(', ') || '-'}`,
  ].join('\n');
}
