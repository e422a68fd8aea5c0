// `flywheel outer`, `promote` and the outer block of `status`, against the real Temporal dev server with no worker
// polling: the started outerLoop never runs, so the test reads back exactly what the CLI asked Temporal for.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import YAML from 'yaml';
import { latestCampaignVersionId, loadCampaignVersion, registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { parseSpec } from '../../tasks/task-spec';
import { CampaignId, LoopKind } from '../../contracts/search-attributes';
import { cliEnv, FLYWHEEL_BIN, runCli } from '../helpers/cli';
import { eventually, loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { cleanUpOuterLoops } from '../helpers/outer-cleanup';
import { fastBuiltinSpec, uniqueName } from '../helpers/specs';

let harness: LoopHarness;
let client: Client;
let env: NodeJS.ProcessEnv;
const prefix = uniqueName('t-outer');
const campaignIds: string[] = [];

beforeAll(async () => {
  harness = await loopHarness('outer-cli');
  client = harness.client;
  env = cliEnv(harness, prefix);
});
afterAll(async () => {
  await cleanUpOuterLoops(client, campaignIds);
  await harness?.close();
});

const cli = (args: string[]) => runCli(env, args, 60_000);

function name(label: string): string {
  const id = uniqueName(label);
  campaignIds.push(id);
  return id;
}

/** The campaign's outer loops that visibility knows of, once it knows of `n`. */
async function outerLoops(campaignId: string, n: number): Promise<string[]> {
  return eventually(`${n} outer loops of ${campaignId}`, async () => {
    const ids: string[] = [];
    for await (const wf of client.workflow.list({ query: `CampaignId = "${campaignId}" AND LoopKind = "outer"` })) ids.push(wf.workflowId);
    return ids.length === n ? ids : undefined;
  });
}

async function inputOf(workflowId: string): Promise<unknown[]> {
  const started = (await client.workflow.getHandle(workflowId).fetchHistory()).events![0].workflowExecutionStartedEventAttributes!;
  return started.input!.payloads!.map((p) => defaultPayloadConverter.fromPayload(p));
}

test('outer --detach starts one outerLoop with the budget in its input; a second is refused while it runs; status shows it', async () => {
  const c = name('out');
  await registerCampaignVersion(harness.db.db, fastBuiltinSpec(c));
  const r = await cli(['outer', c, '--detach', '--iterations', '2', '--experiments', '3', '--parallelism', '2']);
  expect(r.status).toBe(0);
  const [workflowId] = await outerLoops(c, 1);
  expect(workflowId).toMatch(new RegExp(`^${c}/outer/\\d{8}-\\d{6}$`));
  expect(r.stderr).toContain(`started ${workflowId}`);
  const wf = await client.workflow.getHandle(workflowId).describe();
  expect(wf.type).toBe('outerLoop');
  expect(wf.taskQueue).toBe(`${prefix}-orchestration`);
  expect(wf.typedSearchAttributes.get(CampaignId)).toBe(c);
  expect(wf.typedSearchAttributes.get(LoopKind)).toBe('outer');
  expect(await inputOf(workflowId)).toEqual([
    { campaignId: c, iterations: 2, trigger: 'cli', innerBudget: { experiments: 3, parallelism: 2 } },
  ]);

  const second = await cli(['outer', c, '--detach']);
  expect(second.status).toBe(2);
  expect(second.stderr.trim()).toBe(
    `flywheel: campaign "${c}" already has a running outer loop, ${workflowId}: follow it with \`flywheel status ${c}\``,
  );
  expect(await outerLoops(c, 1)).toEqual([workflowId]);

  // No worker answers the status query: status says so, and that the campaign has no inner loop is not an error.
  const status = await cli(['status', c]);
  expect(status.status).toBe(0);
  expect(status.stdout).toContain(`outer loop ${workflowId}: RUNNING`);
  expect(status.stdout).toContain('is an orchestration worker running?');
});

test('outer --spec registers the spec as a version, which the input pins (never the spec), and needs no registered campaign', async () => {
  const c = name('osp');
  const file = path.join(harness.home, `${c}.yaml`);
  fs.writeFileSync(file, YAML.stringify(fastBuiltinSpec(c)));
  const r = await cli(['outer', c, '--spec', file, '--detach']);
  expect(r.status).toBe(0);
  const [workflowId] = await outerLoops(c, 1);
  const [input] = (await inputOf(workflowId)) as [Record<string, unknown>];
  const versionId = await latestCampaignVersionId(harness.db.db, c);
  expect(r.stderr).toContain(`campaign ${versionId} (new)`);
  expect(input).toEqual({ campaignId: c, campaignVersionId: versionId, iterations: 1, trigger: 'cli' });
  expect((await loadCampaignVersion(harness.db.db, versionId!)).spec.searchSpace).toEqual(parseSpec(fastBuiltinSpec(c)).searchSpace);
});

test('outer and promote refuse bad input with exit 2 and one line, and start nothing', async () => {
  const c = name('ref');
  await registerCampaignVersion(harness.db.db, fastBuiltinSpec(c));
  const other = path.join(harness.home, `${c}-other.yaml`);
  fs.writeFileSync(other, YAML.stringify(fastBuiltinSpec(`${c}-other`)));
  const cases: [string[], string][] = [
    [['outer', uniqueName('nobody'), '--detach'], 'unknown campaign'],
    [['outer', c, '--spec', other, '--detach'], `is the spec of campaign "${c}-other", not "${c}"`],
    [['promote', c, '--approve'], `no running outer loop for campaign "${c}": nothing awaits approval`],
    [['promote', c], 'exactly one of --approve and --reject'],
    [['promote', c, '--approve', '--reject'], 'exactly one of --approve and --reject'],
  ];
  for (const [args, message] of cases) {
    const r = await cli(args);
    expect({ args, status: r.status }).toEqual({ args, status: 2 });
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(message);
  }
  const badCount = await cli(['outer', c, '--iterations', 'two', '--detach']);
  expect(badCount.status).toBe(2);
  expect(badCount.stderr.trim().split('\n')).toEqual(['flywheel: --iterations must be an integer from 1 to 999999, got "two"']);
  expect((await client.workflow.count(`CampaignId = "${c}"`)).count).toBe(0);
});

/** Starts `flywheel outer` following the loop; resolves once it printed its "started" line. */
async function startFollowing(c: string) {
  const child = spawn(process.execPath, [FLYWHEEL_BIN, 'outer', c], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d: Buffer) => (out.stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out.stderr += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', r));
  await eventually('the "started" line', async () => (out.stderr.includes('started ') ? true : undefined), 30_000);
  const [workflowId] = await outerLoops(c, 1);
  return { child, out, exited, workflowId };
}

test('following: Ctrl-C detaches and the loop keeps running', async () => {
  const c = name('det');
  await registerCampaignVersion(harness.db.db, fastBuiltinSpec(c));
  const { child, out, exited, workflowId } = await startFollowing(c);
  child.kill('SIGINT');
  expect(await exited).toBe(0);
  expect(out.stderr).toContain(`detached: ${workflowId} keeps running; reattach with \`flywheel status ${c}\``);
  expect((await client.workflow.getHandle(workflowId).describe()).status.name).toBe('RUNNING');
});

test('following: a loop that ends without completing exits 1 with the reason', async () => {
  const c = name('end');
  await registerCampaignVersion(harness.db.db, fastBuiltinSpec(c));
  const { out, exited, workflowId } = await startFollowing(c);
  await client.workflow.getHandle(workflowId).terminate('stopped by the test');
  expect(await exited).toBe(1);
  expect(out.stderr).toContain(`flywheel: ${workflowId} ended TERMINATED: stopped by the test`);
});
