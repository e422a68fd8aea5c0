// `flywheel schedule …` against the real Temporal dev server, with no worker polling: a scheduled outerLoop starts
// and never ends, which is exactly the case the overlap policy (SKIP) is for.
import fs from 'node:fs';
import path from 'node:path';
import { ScheduleNotFoundError, type Client, type ScheduleDescription } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { loadCampaignSpec } from '../../services/campaigns/load-campaign';
import { latestCampaignVersionId, registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { CampaignId, LoopKind } from '../../contracts/search-attributes';
import { cliEnv, runCli } from '../helpers/cli';
import { eventually, loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { cleanUpOuterLoops } from '../helpers/outer-cleanup';
import { fastBuiltinSpec, uniqueName } from '../helpers/specs';

let harness: LoopHarness;
let client: Client;
let env: NodeJS.ProcessEnv;
const prefix = uniqueName('t-sched');
const campaignIds: string[] = [];

beforeAll(async () => {
  harness = await loopHarness('sched');
  client = harness.client;
  env = cliEnv(harness, prefix);
});
afterAll(async () => {
  await cleanUpOuterLoops(client, campaignIds);
  await harness?.close();
});

const cli = (args: string[]) => runCli(env, args, 60_000);

/** A campaign registered in the test database, cleaned up after the file. */
async function campaign(label: string): Promise<string> {
  const id = uniqueName(label);
  campaignIds.push(id);
  await registerCampaignVersion(harness.db.db, fastBuiltinSpec(id));
  return id;
}

const describeSchedule = (campaignId: string): Promise<ScheduleDescription> => client.schedule.getHandle(`${campaignId}/outer`).describe();

/** Workflow ids of the campaign's outer loops that visibility knows of, once it knows of `n`. */
async function outerLoops(campaignId: string, n: number): Promise<string[]> {
  return eventually(`${n} outer loops of ${campaignId}`, async () => {
    const ids: string[] = [];
    for await (const wf of client.workflow.list({ query: `CampaignId = "${campaignId}" AND LoopKind = "outer"` })) ids.push(wf.workflowId);
    return ids.length === n ? ids : undefined;
  });
}

test('a fire starts outerLoop with the campaign input and search attributes; while it runs, later fires are skipped; pause stops them', async () => {
  const c = await campaign('sch');
  const created = await cli(['schedule', 'create', c, '--every', '2s', '--note', 'nightly-ish']);
  expect(created.stderr).toBe('');
  expect(created.status).toBe(0);
  expect(created.stdout).toContain(`created ${c}/outer`);

  const fired = await eventually(
    'a first fire',
    async () => {
      const d = await describeSchedule(c);
      return d.info.recentActions.length > 0 ? d : undefined;
    },
    30_000,
  );
  expect(fired.policies.overlap).toBe('SKIP');
  const workflowId = fired.info.recentActions[0].action.workflow.workflowId;
  expect(workflowId.startsWith(`${c}/outer/scheduled-`)).toBe(true);
  const handle = client.workflow.getHandle(workflowId);
  const wf = await handle.describe();
  expect(wf.type).toBe('outerLoop');
  expect(wf.taskQueue).toBe(`${prefix}-orchestration`);
  expect(wf.status.name).toBe('RUNNING');
  expect(wf.typedSearchAttributes.get(CampaignId)).toBe(c);
  expect(wf.typedSearchAttributes.get(LoopKind)).toBe('outer');
  const started = (await handle.fetchHistory()).events![0].workflowExecutionStartedEventAttributes!;
  expect(started.input!.payloads!.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual([{ campaignId: c, trigger: 'schedule' }]);

  // The overlap guarantee: the first iteration never ends (no worker), so every later fire is skipped.
  const skipped = await eventually(
    'a fire skipped for overlap',
    async () => {
      const d = await describeSchedule(c);
      return d.info.numActionsSkippedOverlap > 0 ? d : undefined;
    },
    30_000,
  );
  expect(skipped.info.numActionsTaken).toBe(1);
  expect(skipped.info.runningActions.map((a) => a.workflow.workflowId)).toEqual([workflowId]);
  expect(await outerLoops(c, 1)).toEqual([workflowId]);

  const paused = await cli(['schedule', 'pause', c, '--note', 'eval review']);
  expect(paused.status).toBe(0);
  const before = await describeSchedule(c);
  expect(before.state.paused).toBe(true);
  // Two fire intervals and more: a schedule still firing would take or skip at least one.
  await new Promise((r) => setTimeout(r, 5_000));
  const after = await describeSchedule(c);
  expect(after.info.numActionsTaken + after.info.numActionsSkippedOverlap).toBe(
    before.info.numActionsTaken + before.info.numActionsSkippedOverlap,
  );

  const listed = await cli(['schedule', 'list', '--json']);
  expect(listed.status).toBe(0);
  const row = (JSON.parse(listed.stdout) as { campaign: string }[]).find((r) => r.campaign === c);
  expect(row).toMatchObject({
    id: `${c}/outer`,
    campaign: c,
    spec: 'every 2s',
    paused: true,
    note: 'eval review',
    running: [workflowId],
    overlap: 'SKIP',
  });

  const unpaused = await cli(['schedule', 'unpause', c]);
  expect(unpaused.status).toBe(0);
  expect((await describeSchedule(c)).state.paused).toBe(false);
});

test('trigger fires once and respects the overlap policy; delete removes the schedule', async () => {
  const c = await campaign('trg');
  expect((await cli(['schedule', 'create', c, '--every', '1d', '--paused'])).status).toBe(0);
  expect((await describeSchedule(c)).state.paused).toBe(true);

  const first = await cli(['schedule', 'trigger', c]);
  expect(first.status).toBe(0);
  const d1 = await eventually(
    'the triggered fire',
    async () => {
      const d = await describeSchedule(c);
      return d.info.recentActions.length === 1 ? d : undefined;
    },
    30_000,
  );
  const [workflowId] = await outerLoops(c, 1);
  expect(d1.info.recentActions[0].action.workflow.workflowId).toBe(workflowId);

  // A second trigger while that iteration runs is skipped, not run beside it.
  const second = await cli(['schedule', 'trigger', c]);
  expect(second.status).toBe(0);
  expect(second.stdout).toContain('still running');
  const d2 = await eventually(
    'the second trigger skipped',
    async () => {
      const d = await describeSchedule(c);
      return d.info.numActionsSkippedOverlap === 1 ? d : undefined;
    },
    30_000,
  );
  expect(d2.info.numActionsTaken).toBe(1);
  expect(await outerLoops(c, 1)).toEqual([workflowId]);

  // Once it has ended, a trigger starts the next one.
  await client.workflow.getHandle(workflowId).terminate('test: let the next trigger run');
  expect((await cli(['schedule', 'trigger', c])).status).toBe(0);
  await eventually('a second fire', async () => ((await describeSchedule(c)).info.numActionsTaken === 2 ? true : undefined), 30_000);
  expect(await outerLoops(c, 2)).toContain(workflowId);

  const del = await cli(['schedule', 'delete', c]);
  expect(del.status).toBe(0);
  await expect(describeSchedule(c)).rejects.toBeInstanceOf(ScheduleNotFoundError);
  const gone = await cli(['schedule', 'describe', c]);
  expect(gone.status).toBe(2);
  expect(gone.stderr.trim()).toBe(
    `flywheel: no schedule for campaign "${c}" (create one with \`flywheel schedule create ${c} --every 1d\`)`,
  );
});

test('an existing schedule is refused without --update; --update changes its spec; --cron is shown as given', async () => {
  const c = await campaign('upd');
  expect((await cli(['schedule', 'create', c, '--cron', '0 3 * * *', '--paused'])).status).toBe(0);
  const again = await cli(['schedule', 'create', c, '--every', '6h']);
  expect(again.status).toBe(2);
  expect(again.stderr.trim().split('\n')).toHaveLength(1);
  expect(again.stderr).toContain('already exists');
  const shown = await cli(['schedule', 'describe', c, '--json']);
  expect(JSON.parse(shown.stdout)).toMatchObject({ spec: 'cron "0 3 * * *"', paused: true });

  const updated = await cli(['schedule', 'create', c, '--every', '6h', '--update']);
  expect(updated.status).toBe(0);
  const d = await describeSchedule(c);
  expect(d.spec.intervals?.map((i) => i.every)).toEqual([6 * 3_600_000]);
  expect(d.spec.calendars).toEqual([]);
  expect(d.state.paused).toBe(true);
  expect(JSON.parse((await cli(['schedule', 'describe', c, '--json'])).stdout).spec).toBe('every 6h');
});

test('--spec registers a campaign version that every fire pins, and a new one with --update', async () => {
  const c = uniqueName('spc');
  campaignIds.push(c);
  const file = path.join(harness.home, `${c}.json`);
  fs.writeFileSync(file, JSON.stringify(fastBuiltinSpec(c)));
  const r = await cli(['schedule', 'create', c, '--every', '1d', '--spec', file]);
  expect(r.status).toBe(0);
  expect((await describeSchedule(c)).state.paused).toBe(false);
  expect((await loadCampaignSpec(harness.db.db, c)).name).toBe(c);
  const pinned = async () => ((await describeSchedule(c)).action as { args: { campaignVersionId?: string }[] }).args[0].campaignVersionId;
  const first = await latestCampaignVersionId(harness.db.db, c);
  expect(await pinned()).toBe(first);

  // --update with --spec stores the new spec too.
  fs.writeFileSync(file, JSON.stringify(fastBuiltinSpec(c, { innerLoop: { budget: { experiments: 7, parallelism: 1 } } })));
  expect((await cli(['schedule', 'create', c, '--every', '2d', '--spec', file, '--update'])).status).toBe(0);
  expect((await loadCampaignSpec(harness.db.db, c)).innerLoop.budget.experiments).toBe(7);
  expect((await describeSchedule(c)).spec.intervals?.map((i) => i.every)).toEqual([2 * 86_400_000]);
  const second = await latestCampaignVersionId(harness.db.db, c);
  expect(second).not.toBe(first);
  expect(await pinned()).toBe(second);
  // --update without --spec changes the timing only: the schedule keeps the version it pins.
  expect((await cli(['schedule', 'create', c, '--every', '3d', '--update'])).status).toBe(0);
  expect(await pinned()).toBe(second);
});

test('usage errors exit 2 with one line and create nothing', async () => {
  const c = await campaign('bad');
  const cases: [string[], string][] = [
    [['schedule', 'create', c, '--every', '1x'], 'bad --every "1x"'],
    [['schedule', 'create', c, '--every', '0s'], 'bad --every "0s"'],
    [['schedule', 'create', c, '--every', '1.5h'], 'bad --every "1.5h"'],
    [['schedule', 'create', c, '--every', '1h30m'], 'bad --every "1h30m"'],
    [['schedule', 'create', c, '--every', '1d', '--cron', '0 3 * * *'], 'exactly one of --every'],
    [['schedule', 'create', c], 'exactly one of --every'],
    [['schedule', 'create', c, '--cron', 'not a cron'], 'bad --cron "not a cron"'],
    [['schedule', 'create', uniqueName('nobody'), '--every', '1d'], 'unknown campaign'],
    [['schedule', 'pause', c], `no schedule for campaign "${c}"`],
    [['schedule', 'unpause', c], `no schedule for campaign "${c}"`],
    [['schedule', 'trigger', c], `no schedule for campaign "${c}"`],
    [['schedule', 'delete', c], `no schedule for campaign "${c}"`],
    [['schedule', 'describe', c], `no schedule for campaign "${c}"`],
  ];
  for (const [args, message] of cases) {
    const r = await cli(args);
    expect({ args, status: r.status, stdout: r.stdout }).toEqual({ args, status: 2, stdout: '' });
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(message);
  }
  await expect(describeSchedule(c)).rejects.toBeInstanceOf(ScheduleNotFoundError);
  expect(await client.workflow.count(`CampaignId = "${c}"`)).toEqual(expect.objectContaining({ count: 0 }));
});
