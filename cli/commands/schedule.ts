// `flywheel schedule create|list|describe|pause|unpause|trigger|delete`: the Temporal Schedule that runs a
// campaign's outer loop (one per campaign, id `<campaign>/outer`, overlap SKIP: never two iterations at once).
import { ScheduleAlreadyRunning, ScheduleNotFoundError, type Client } from '@temporalio/client';
import type { Command } from 'commander';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { parseDuration } from '../duration';
import { UsageError } from '../errors';
import {
  campaignOfSchedule,
  outerScheduleAction,
  outerScheduleId,
  OUTER_SCHEDULE_POLICIES,
  requireOuterSchedule,
  scheduleSpecOf,
  type OuterTiming,
} from '../outer-schedules';
import { requireCampaign } from '../require-campaign';
import { formatScheduleDetail, formatScheduleTable, scheduleRow, type ScheduleRow } from '../schedule-view';
import { withSession, type Session } from '../session';
import { scheduleUiLink } from '../../temporal/ui-links';

interface CreateOptions {
  /** Fire every DURATION (`45s`, `30m`, `6h`, `1d`); exactly one of `every` and `cron`. */
  every?: string;
  /** Fire at the times of a cron expression (UTC). */
  cron?: string;
  /**
   * A spec file to register as a campaign version, which every fire then runs. @default none: each fire runs the
   * campaign's latest version (it must be registered already); an update keeps the schedule's action
   */
  spec?: string;
  /** Create it paused. @default false */
  paused?: boolean;
  /** A note shown with the schedule's state. */
  note?: string;
  /** Change an existing schedule (or create it) instead of refusing. @default false */
  update?: boolean;
}

/** Exactly one of --every and --cron, checked before anything is contacted. */
function timingOf(opts: CreateOptions): OuterTiming {
  if ((opts.every === undefined) === (opts.cron === undefined))
    throw new UsageError('give exactly one of --every DURATION and --cron EXPR');
  if (opts.every !== undefined) return { everyMs: parseDuration(opts.every, '--every') };
  if (!opts.cron!.trim()) throw new UsageError('--cron needs an expression, e.g. "0 3 * * *"');
  return { cron: opts.cron!.trim() };
}

async function exists(client: Client, scheduleId: string): Promise<boolean> {
  try {
    await client.schedule.getHandle(scheduleId).describe();
    return true;
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return false;
    throw err;
  }
}

async function create(s: Session, campaignId: string, opts: CreateOptions, timing: OuterTiming): Promise<void> {
  const { spec, versionId } = await requireCampaign(s.db, campaignId, opts.spec);
  const scheduleId = outerScheduleId(campaignId);
  const already = await exists(s.client, scheduleId);
  if (already && !opts.update)
    throw new UsageError(`schedule ${scheduleId} already exists: add --update to change it, or \`flywheel schedule delete ${campaignId}\``);
  const handle = s.client.schedule.getHandle(scheduleId);
  const action = outerScheduleAction(campaignId, s.endpoints, versionId);
  const fields = { spec: scheduleSpecOf(timing), policies: OUTER_SCHEDULE_POLICIES };
  // A spec to register is stored only once the schedule is accepted, so a bad --cron changes nothing; until then a
  // new schedule waits paused, so no fire can start an iteration of a campaign not yet stored.
  const waitForSpec = !already && opts.spec !== undefined && !opts.paused;
  try {
    if (already) {
      // Without --spec an update changes the timing only: the action keeps the version it pinned (or none).
      await handle.update((prev) => ({
        ...prev,
        ...fields,
        action: versionId !== undefined ? action : prev.action,
        state: { ...prev.state, paused: opts.paused || prev.state.paused, note: opts.note ?? prev.state.note },
      }));
    } else {
      await s.client.schedule.create({ scheduleId, ...fields, action, state: { paused: !!opts.paused || waitForSpec, note: opts.note } });
    }
  } catch (err) {
    // The SDK turns the server's "Invalid schedule spec" into a TypeError carrying the reason.
    if (err instanceof TypeError && 'cron' in timing) throw new UsageError(`bad --cron "${timing.cron}": ${err.message}`);
    if (err instanceof ScheduleAlreadyRunning) throw new UsageError(`schedule ${scheduleId} already exists: add --update to change it`);
    throw err;
  }
  if (opts.spec !== undefined) await registerCampaignVersion(s.db, spec, opts.spec);
  if (waitForSpec) await handle.unpause(opts.note ?? 'created with flywheel schedule create');
  if (already) console.log(`updated ${scheduleId}`);
  else console.log(`created ${scheduleId}${opts.paused ? ' (paused)' : ''}`);
  if (opts.spec !== undefined) console.log(`  registered campaign ${versionId} from ${opts.spec}; every fire runs it`);
  const link = scheduleUiLink(s.endpoints, scheduleId);
  if (link) console.log(`  Temporal UI: ${link}`);
}

async function list(client: Client): Promise<ScheduleRow[]> {
  const rows: ScheduleRow[] = [];
  for await (const summary of client.schedule.list()) {
    if (campaignOfSchedule(summary.scheduleId) === undefined) continue;
    try {
      // The list is eventually consistent; the description is the schedule's current state.
      rows.push(scheduleRow(await client.schedule.getHandle(summary.scheduleId).describe()));
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err; // deleted since it was listed
    }
  }
  return rows.sort((a, b) => a.campaign.localeCompare(b.campaign));
}

export function registerSchedule(program: Command): void {
  const schedule = program
    .command('schedule')
    .description("run a campaign's outer loop on a Temporal Schedule (never two iterations at once)")
    .addHelpText('after', '\nExample:\n  $ flywheel schedule create builtin-demo --every 1d\n  $ flywheel schedule list\n');

  schedule
    .command('create')
    .description("schedule the campaign's outer loop: every DURATION, or at the times of a cron expression")
    .argument('<campaign>', 'campaign id (registered, or given with --spec)')
    .option('--every <duration>', 'interval: a whole number and s, m, h or d (45s, 30m, 6h, 1d)')
    .option('--cron <expr>', 'cron expression (UTC), e.g. "0 3 * * *" or @daily')
    .option(
      '--spec <file>',
      'register this spec as a campaign version first; every fire runs it (default: the latest version at each fire)',
    )
    .option('--paused', 'create it paused')
    .option('--note <text>', "a note shown with the schedule's state")
    .option('--update', 'change the timing of an existing schedule instead of refusing')
    .addHelpText(
      'after',
      '\nExamples:\n  $ flywheel schedule create builtin-demo --every 1d\n  $ flywheel schedule create my-run --cron "0 3 * * *" --spec my-run.yaml\n',
    )
    .action(async (campaignId: string, opts: CreateOptions) => {
      const timing = timingOf(opts); // usage errors before any connection
      await withSession((s) => create(s, campaignId, opts, timing));
    });

  schedule
    .command('list')
    .description('list the outer-loop schedules: spec, state, next and last runs, the running iteration')
    .option('--json', 'machine-readable output')
    .addHelpText('after', '\nExample:\n  $ flywheel schedule list --json\n')
    .action(async (opts: { json?: boolean }) =>
      withSession(async (s) => {
        const rows = await list(s.client);
        console.log(opts.json ? JSON.stringify(rows, null, 2) : formatScheduleTable(rows));
      }),
    );

  schedule
    .command('describe')
    .description("show one campaign's schedule in full")
    .argument('<campaign>')
    .option('--json', 'machine-readable output')
    .addHelpText('after', '\nExample:\n  $ flywheel schedule describe builtin-demo\n')
    .action(async (campaignId: string, opts: { json?: boolean }) =>
      withSession(async (s) => {
        const row = scheduleRow((await requireOuterSchedule(s.client, campaignId)).desc);
        console.log(opts.json ? JSON.stringify(row, null, 2) : formatScheduleDetail(row));
      }),
    );

  for (const name of ['pause', 'unpause'] as const) {
    schedule
      .command(name)
      .description(name === 'pause' ? 'stop the schedule from firing (a running iteration goes on)' : 'let a paused schedule fire again')
      .argument('<campaign>')
      .option('--note <text>', 'why (shown with the state)')
      .addHelpText('after', `\nExample:\n  $ flywheel schedule ${name} builtin-demo --note "eval suite under review"\n`)
      .action(async (campaignId: string, opts: { note?: string }) =>
        withSession(async (s) => {
          const { handle } = await requireOuterSchedule(s.client, campaignId);
          await (name === 'pause'
            ? handle.pause(opts.note ?? 'paused with flywheel schedule pause')
            : handle.unpause(opts.note ?? 'unpaused with flywheel schedule unpause'));
          console.log(`${name}d ${handle.scheduleId}`);
        }),
      );
  }

  schedule
    .command('trigger')
    .description('fire the schedule now (skipped, by the overlap policy, while an iteration runs)')
    .argument('<campaign>')
    .addHelpText('after', '\nExample:\n  $ flywheel schedule trigger builtin-demo\n')
    .action(async (campaignId: string) =>
      withSession(async (s) => {
        const { handle, desc } = await requireOuterSchedule(s.client, campaignId);
        // The SDK's default for a trigger is ALLOW_ALL; pass the schedule's own policy so SKIP holds here too.
        await handle.trigger(desc.policies.overlap ?? OUTER_SCHEDULE_POLICIES.overlap);
        const running = desc.info.runningActions[0]?.workflow.workflowId;
        console.log(
          `triggered ${handle.scheduleId}${running ? ` (${running} is still running: overlap ${desc.policies.overlap} skips this fire)` : ''}`,
        );
      }),
    );

  schedule
    .command('delete')
    .description('delete the schedule (an iteration it started keeps running)')
    .argument('<campaign>')
    .addHelpText('after', '\nExample:\n  $ flywheel schedule delete builtin-demo\n')
    .action(async (campaignId: string) =>
      withSession(async (s) => {
        const { handle, desc } = await requireOuterSchedule(s.client, campaignId);
        await handle.delete();
        const running = desc.info.runningActions.map((a) => a.workflow.workflowId);
        console.log(`deleted ${handle.scheduleId}${running.length ? ` (still running: ${running.join(', ')})` : ''}`);
      }),
    );
}
