// A trainer that cannot start is found before anything is written: the inner loop's first step (checkTrainer, on the
// training worker) refuses a trainer whose program does not exist, with zero rows and no run directory, and the
// loop fails with that one-line reason, which `flywheel run`, `flywheel status`, the dashboard and the workflow's
// failure (what the Temporal UI shows) all carry. A loop that fails later (its baseline) shows its reason as well. A
// warm-trainer campaign's trainer must also speak `train --serve`.
import fs from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import YAML from 'yaml';
import { startDashboard, type DashboardServer } from '../../server/dashboard/server';
import { cliEnv, runCli } from '../helpers/cli';
import { temporalAddress } from '../helpers/env';
import { eventually, loopHarness, type LoopHarness, type LoopWorkers } from '../helpers/loop-harness';
import { fixtureSpec, uniqueName } from '../helpers/specs';

let harness: LoopHarness;
let workers: LoopWorkers;
let env: NodeJS.ProcessEnv;
let dashboard: DashboardServer;

beforeAll(async () => {
  harness = await loopHarness('preflight');
  workers = await harness.workers('t-preflight');
  env = cliEnv(harness, workers.prefix);
  const endpoints = {
    temporalAddress: temporalAddress(),
    namespace: 'default',
    databaseUrl: harness.dbUrl,
    taskQueuePrefix: workers.prefix,
    uiUrl: 'http://127.0.0.1:8233',
  };
  dashboard = await startDashboard({ db: harness.db.db, temporal: { client: harness.client, endpoints }, port: 0 });
});
afterAll(async () => {
  await dashboard?.close();
  await harness?.close();
});

const MISSING = 'flywheel-no-such-trainer';
const REASON = new RegExp(`^the trainer cannot start on the training worker \\(.+\\): trainer program "${MISSING}" was not found on PATH$`);

/** A campaign whose trainer program exists nowhere; everything else is the fixture trainer's spec. */
function missingTrainerSpec(name: string) {
  const spec = fixtureSpec(name, { steps: 5 });
  return { ...spec, trainer: { ...spec.trainer, command: [MISSING, '--flag'] } };
}

/** The rows registering a campaign's spec writes (`flywheel run` does it before the loop starts): one campaign, one version. */
const registered = (counts: Record<string, number>) => ({
  ...counts,
  campaigns: counts.campaigns + 1,
  campaign_versions: counts.campaign_versions + 1,
});

/** Rows in every table of the test's database (the migrations' own bookkeeping is in another schema). */
async function rowCounts(): Promise<Record<string, number>> {
  const { rows } = await harness.db.pool.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1",
  );
  const out: Record<string, number> = {};
  for (const { table_name } of rows)
    out[table_name] = (await harness.db.pool.query(`SELECT count(*)::int AS n FROM "${table_name}"`)).rows[0].n;
  return out;
}

const get = async (p: string) => {
  const r = await fetch(dashboard.url + p);
  return { status: r.status, text: await r.text() };
};

test('a trainer whose program does not exist is refused on the training worker before anything is written', async () => {
  const before = await rowCounts();
  expect(Object.keys(before).length).toBeGreaterThan(10);
  const name = uniqueName('missing');
  const h = await workers.startLoop(name, missingTrainerSpec(name));
  const err = await h.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect((cause as ApplicationFailure).type).toBe('TrainerCannotStart');
  expect((cause as ApplicationFailure).nonRetryable).toBe(true);
  expect(cause?.message).toMatch(REASON);

  // Not a row beside the registered spec, not a run directory: the check was the loop's one step, on the training queue.
  expect(await rowCounts()).toEqual(registered(before));
  expect(fs.existsSync(path.join(harness.home, 'runs'))).toBe(false);
  const { events } = await h.fetchHistory();
  const scheduled = events!.flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes] : []));
  expect(scheduled.map((a) => [a.activityType?.name, a.taskQueue?.name])).toEqual([['checkTrainer', `${workers.prefix}-training`]]);
  // The workflow's failure, one line: what the Temporal UI shows for the execution.
  const failed = events!.find((e) => e.workflowExecutionFailedEventAttributes)!.workflowExecutionFailedEventAttributes!;
  expect(failed.failure?.message).toMatch(REASON);
});

test('a warm-trainer campaign whose trainer does not speak `train --serve` is refused before anything is written', async () => {
  const before = await rowCounts();
  const name = uniqueName('no-serve');
  const spec = fixtureSpec(name, { steps: 5 });
  // A trainer that trains one-shot but refuses `train --serve`, with a line on stderr, as an older trainer would.
  const script = "if (process.argv.includes('--serve')) { console.error('train: unknown option --serve'); process.exit(2); }";
  const h = await workers.startLoop(name, {
    ...spec,
    trainer: { ...spec.trainer, command: [process.execPath, '-e', script], warmTrain: true },
  });
  const err = await h.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
  expect(cause.type).toBe('TrainerCannotStart');
  expect(cause.message).toMatch(
    /^trainer\.warmTrain: the trainer does not serve runs on the training worker \(.+\): `train --serve` exited with code 2: train: unknown option --serve$/,
  );
  expect(await rowCounts()).toEqual(registered(before));
});

test('`flywheel run` of such a spec exits 1 with the reason; `status` and the dashboard show it', async () => {
  const name = uniqueName('missing-cli');
  const file = path.join(harness.home, `${name}.yaml`);
  fs.writeFileSync(file, YAML.stringify(missingTrainerSpec(name)));
  const before = await rowCounts();
  const run = await runCli(env, ['run', file]);
  expect(run.status).toBe(1);
  expect(run.stderr).not.toMatch(/\n\s+at /);
  const failedLine = run.stderr.trim().split('\n').at(-1)!;
  expect(failedLine).toMatch(
    new RegExp(
      `^flywheel: ${name}/inner/\\S+ ended FAILED: the trainer cannot start on the training worker \\(.+\\): trainer program "${MISSING}" was not found on PATH$`,
    ),
  );
  expect(await rowCounts()).toEqual(registered(before));

  // No loop row exists (only the registered spec): status still finds the loop (by its search attributes) and prints why it failed.
  const status = await runCli(env, ['status', name]);
  expect(status.status).toBe(0);
  const [head, reason] = status.stdout.trim().split('\n');
  expect(head).toMatch(new RegExp(`^${name}/inner/\\S+: FAILED`));
  expect(reason).toMatch(new RegExp(`^  reason: ${REASON.source.slice(1)}`));
  const json = await runCli(env, ['status', name, '--json']);
  expect(JSON.parse(json.stdout)).toMatchObject({ status: 'FAILED', reason: expect.stringMatching(REASON) });

  // The dashboard: on the campaigns page, and on the campaign's page, which has its registered spec and no loop row.
  const home = await eventually('the failed loop on the campaigns page', async () => {
    const r = await get('/');
    return r.text.includes(name) ? r : undefined;
  });
  expect(home.text).toMatch(/<table id="failed-loops">/);
  expect(home.text).toContain(`trainer program &quot;${MISSING}&quot; was not found on PATH`);
  const campaign = await get(`/campaigns/${name}`);
  expect(campaign.status).toBe(200);
  expect(campaign.text).toContain('No inner loops yet.');
  expect(campaign.text).toContain(`trainer program &quot;${MISSING}&quot; was not found on PATH`);
});

test("a failing baseline ends the loop before any experiment is launched, with the trainer's last line; status and the dashboard show it", async () => {
  const name = uniqueName('baseline-crash');
  const spec = fixtureSpec(name, { steps: 5 }, { maxTrainingAttempts: 1, budget: { experiments: 2, parallelism: 2 }, batchSize: 2 });
  // The baseline runs with `trainer.fixed` alone: here it crashes (every experiment would too).
  const file = path.join(harness.home, `${name}.yaml`);
  fs.writeFileSync(file, YAML.stringify({ ...spec, trainer: { ...spec.trainer, fixed: { crash: true } } }));
  const run = await runCli(env, ['run', file]);
  expect(run.status).toBe(1);
  // The fixture trainer's last stderr line names its run: the reason is the baseline's own, not an experiment's.
  const loopId = /(\S+\/inner\/\S+) ended FAILED/.exec(run.stderr)![1];
  const baselineRun = (
    await harness.db.pool.query(
      'SELECT r.id FROM training_runs r JOIN inner_loops l ON l.baseline_experiment_id = r.experiment_id WHERE l.id = $1',
      [loopId],
    )
  ).rows.map((r: { id: string }) => r.id);
  expect(baselineRun).toHaveLength(1);
  expect(run.stderr.trim().split('\n').at(-1)).toBe(
    `flywheel: ${loopId} ended FAILED: the untrained baseline failed: the trainer exited with code 3: fixture-trainer: exploding on purpose (run ${baselineRun[0]})`,
  );
  // No experiment was proposed or launched beside it: one child workflow (the baseline), one experiment row, one run.
  const { events } = await harness.client.workflow.getHandle(loopId).fetchHistory();
  expect(events!.filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)).toHaveLength(1);
  const scheduled = events!.flatMap((e) =>
    e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType?.name] : [],
  );
  expect(scheduled).not.toContain('proposeExperiments');
  const counts = await harness.db.pool.query(
    `SELECT (SELECT count(*)::int FROM experiments WHERE campaign_id = $1) AS experiments,
            (SELECT count(*)::int FROM training_runs r JOIN experiments e ON e.id = r.experiment_id WHERE e.campaign_id = $1) AS runs`,
    [name],
  );
  expect(counts.rows[0]).toEqual({ experiments: 1, runs: 1 });

  const status = await runCli(env, ['status', name]);
  const [head, reason] = status.stdout.trim().split('\n');
  expect(head).toMatch(/: FAILED/);
  // The trainer's own last line says why, not only its exit code.
  expect(reason).toMatch(
    /^  reason: the untrained baseline failed: the trainer exited with code 3: fixture-trainer: exploding on purpose \(run /,
  );

  expect(head.split(':')[0]).toBe(loopId);
  const loopPage = await get(`/loops/${encodeURIComponent(loopId)}`);
  expect(loopPage.status).toBe(200);
  expect(loopPage.text).toMatch(
    /<div class="msg error" role="alert" id="loop-failure">The loop ended FAILED: the untrained baseline failed: the trainer exited with code 3: fixture-trainer: exploding on purpose/,
  );
  // One status on the page, the workflow's end, never "running" beside it (the row still records running).
  expect(loopPage.text).toContain('Status: <b id="loop-status">FAILED</b>');
  expect(loopPage.text).not.toMatch(/Recorded status|<b[^>]*>running<\/b>/);
  const campaign = await get(`/campaigns/${name}`);
  expect(campaign.text).toMatch(/<table id="failed-loops">/);
  const loopRow = /<table id="inner-loops">[\s\S]*?<\/table>/.exec(campaign.text)?.[0] ?? '';
  expect(loopRow).toContain('<td>FAILED</td>');
  expect(loopRow).not.toContain('<td>running</td>');
  expect(campaign.text).toContain('the untrained baseline failed: the trainer exited with code 3');
});

test('a search in which every experiment failed exits 1 with the reason they share, not 0 over an empty summary', async () => {
  const name = uniqueName('all-fail');
  // The baseline gets trainer.fixed alone and succeeds; every searched experiment gets crash: true.
  const spec = fixtureSpec(name, { steps: 5, crash: true }, { maxTrainingAttempts: 1 });
  const file = path.join(harness.home, `${name}.yaml`);
  fs.writeFileSync(file, YAML.stringify(spec));
  const run = await runCli(env, ['run', file]);
  expect(run.stdout).toContain('no experiment succeeded');
  expect(run.status).toBe(1);
  expect(run.stderr.trim().split('\n').at(-1)).toMatch(
    new RegExp(
      `^flywheel: no experiment of ${name}/inner/\\S+ succeeded \\(1 failed\\); every one: the trainer exited with code 3: fixture-trainer: exploding on purpose`,
    ),
  );
});

test('an outer loop whose inner loop cannot start its trainer: the iteration row, `flywheel outer` and `status` give the reason', async () => {
  const name = uniqueName('outer-missing');
  const file = path.join(harness.home, `${name}.yaml`);
  fs.writeFileSync(file, YAML.stringify(missingTrainerSpec(name)));
  const r = await runCli(env, ['outer', name, '--spec', file]);
  expect(r.status).toBe(1);
  // The iteration checks the trainer right after its claim: no critique, dataset version or inner loop is made.
  const reason = new RegExp(
    `^the trainer cannot start on the training worker \\(.+\\): trainer program "${MISSING}" was not found on PATH$`,
  );
  expect(r.stderr.trim().split('\n').at(-1)).toMatch(new RegExp(`^flywheel: ${name}/outer/\\S+ ended FAILED: ${reason.source.slice(1)}`));
  const { rows } = await harness.db.pool.query("SELECT status, summary->>'reason' AS reason FROM outer_iterations WHERE campaign_id = $1", [
    name,
  ]);
  expect(rows).toEqual([{ status: 'failed', reason: expect.stringMatching(reason) }]);
  const [{ n }] = (await harness.db.pool.query('SELECT count(*)::int AS n FROM experiments WHERE campaign_id = $1', [name])).rows;
  expect(n).toBe(0);
  // Without the iteration's own check, its task is prepared (the base dataset version) before the inner loop refuses.
  const count = async (sql: string) => (await harness.db.pool.query(sql, [name])).rows[0].c as number;
  expect(await count("SELECT count(*)::int AS c FROM dataset_versions WHERE dataset_id = $1 || '/code'")).toBe(0);
  expect(await count('SELECT count(*)::int AS c FROM inner_loops WHERE campaign_id = $1')).toBe(0);

  const status = await runCli(env, ['status', name]);
  expect(status.status).toBe(0);
  const [head, line] = status.stdout.trim().split('\n');
  expect(head).toMatch(new RegExp(`^outer loop ${name}/outer/\\S+: FAILED`));
  expect(line).toMatch(new RegExp(`^  reason: ${reason.source.slice(1)}`));
});
