// `flywheel export mlflow CAMPAIGN` against a real MLflow tracking server (.ci/install-mlflow.sh's venv, started here on
// 127.0.0.1 with a sqlite store in a temp folder): each experiment becomes one run with its params, its training
// curves by step, its public metrics and tags for its versions and verdicts; a re-export updates the same runs; and
// nothing held out reaches MLflow (no held-out item id, text or score), read back from everything MLflow stored.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { DbHandle } from '../../db/client';
import { decisions, evalResults, experiments, metricPoints, trainingRuns } from '../../db/schema';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { mlflowClient } from '../../services/mlflow/mlflow-client';
import { cliEnv, runCli } from '../helpers/cli';
import { freshDatabase, scratchDir } from '../helpers/env';
import { freePort } from '../helpers/ports';
import { requires, servicePath } from '../helpers/requires';
import { fastBuiltinSpec, uniqueName } from '../helpers/specs';

requires('mlflow');

const home = scratchDir('export-mlflow');
const campaign = uniqueName('mlf');
const SECRET_ID = `${campaign}-suite@1/heldout/h-secret-7`;
const SECRET_TEXT = 'def held_out_secret_prompt():';
const HELDOUT_SCORE = 0.123456789;
let h: DbHandle;
let env: NodeJS.ProcessEnv;
let server: ChildProcess;
let uri: string;

async function startMlflow(): Promise<void> {
  const dir = path.join(home, 'mlflow');
  fs.mkdirSync(dir, { recursive: true });
  const port = await freePort();
  uri = `http://127.0.0.1:${port}`;
  const args = ['server', '--host', '127.0.0.1', '--port', String(port), '--workers', '1'];
  args.push('--backend-store-uri', `sqlite:///${path.join(dir, 'mlflow.db')}`, '--default-artifact-root', path.join(dir, 'artifacts'));
  server = spawn(servicePath('mlflow')!, args, { cwd: dir, stdio: 'ignore', detached: true });
  for (;;) {
    if (server.exitCode !== null) throw new Error(`mlflow server exited with code ${server.exitCode}`);
    if (
      await fetch(`${uri}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 500));
  }
}

beforeAll(async () => {
  const db = await freshDatabase('export_mlflow');
  h = db.handle;
  env = cliEnv({ dbUrl: db.url, home }, 'export-mlflow-');
  const { versionId } = await registerCampaignVersion(h.db, fastBuiltinSpec(campaign));
  const loop = `${campaign}/inner`;
  const at = new Date('2026-01-02T03:04:05Z');
  const experiment = (index: number, status: string, publicScore: number | null) => ({
    id: `${loop}/e${index}`,
    campaignId: campaign,
    innerLoopId: loop,
    campaignVersionId: versionId,
    index,
    datasetVersionId: `${campaign}/base@abcdef012345`,
    params: { lr: 0.01 * (index + 1), hidden: 32, optimizer: 'adam' },
    hypothesis: `try lr ${index}`,
    proposer: 'tpe',
    status,
    publicScore,
    heldoutScore: HELDOUT_SCORE,
    bestCheckpointId: `${loop}/e${index}/r1/step-300`,
    startedAt: at,
    finishedAt: new Date(at.getTime() + 60_000),
  });
  await h.db.insert(experiments).values([experiment(0, 'succeeded', 1.9), experiment(1, 'failed', null)]);
  await h.db
    .insert(trainingRuns)
    .values([{ id: `${loop}/e0/r1`, experimentId: `${loop}/e0`, attempt: 1, backend: 'local', runDir: home, status: 'succeeded' }]);
  await h.db
    .insert(metricPoints)
    .values([100, 200, 300].map((step, k) => ({ runId: `${loop}/e0/r1`, name: 'train_loss', step, value: 3 - k, offset: k * 40 })));
  const result = (split: string, metrics: Record<string, number>, perItem: Record<string, number>) => ({
    id: `${loop}/e0/r1/step-300|${campaign}-suite@1|${split}`,
    checkpointId: `${loop}/e0/r1/step-300`,
    experimentId: `${loop}/e0`,
    suiteId: `${campaign}-suite@1`,
    split,
    itemCount: Object.keys(perItem).length,
    metrics,
    perItem,
    details: split === 'public' ? { outputs: { p1: 'public output' } } : {},
  });
  await h.db
    .insert(evalResults)
    .values([
      result('public', { bits_per_byte: 1.9, pass_rate: 0.5 }, { p1: 1, p2: 0 }),
      result('heldout', { bits_per_byte: HELDOUT_SCORE, [SECRET_TEXT]: 1 }, { [SECRET_ID]: HELDOUT_SCORE }),
    ]);
  await h.db.insert(decisions).values({
    id: `${loop}/promote`,
    campaignId: campaign,
    kind: 'promote',
    experimentId: `${loop}/e0`,
    checkpointId: `${loop}/e0/r1/step-300`,
    rule: 'heldout-improvement',
    reason: `held-out ${HELDOUT_SCORE} on ${SECRET_ID}`,
    figures: { heldout: HELDOUT_SCORE, item: SECRET_ID },
    accepted: true,
  });
  await startMlflow();
}, 240_000);
afterAll(async () => {
  if (server?.pid && server.exitCode === null) {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    process.kill(-server.pid, 'SIGTERM');
    await exited;
  }
  await h?.close();
});

/** Every run of the campaign's MLflow experiment, with everything it holds (each metric's whole history). */
async function exported() {
  const client = mlflowClient(uri);
  const id = await client.experimentId(campaign);
  const search = await fetch(`${uri}/api/2.0/mlflow/runs/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ experiment_ids: [id], max_results: 100 }),
  }).then((r) => r.json() as Promise<{ runs: { info: { run_id: string } }[] }>);
  const runs = await Promise.all(
    search.runs.map(async ({ info }) => {
      const run = await client.run(info.run_id);
      const history = Object.fromEntries(
        await Promise.all(
          run.metrics.map(async (m) => [m.key, (await client.metricHistory(info.run_id, m.key)).map((p) => [p.step, p.value])]),
        ),
      );
      return {
        ...run,
        tag: Object.fromEntries(run.tags.map((t) => [t.key, t.value])),
        param: Object.fromEntries(run.params.map((p) => [p.key, p.value])),
        history,
      };
    }),
  );
  return { runs: runs.sort((a, b) => (a.tag['flywheel.experiment_id'] < b.tag['flywheel.experiment_id'] ? -1 : 1)) };
}

test('each experiment is one MLflow run: params, curves by step, public metrics, versions and the verdict; a re-export updates them', async () => {
  const first = await runCli(env, ['export', 'mlflow', campaign, '--tracking-uri', uri, '--json']);
  expect(first.stderr).toBe('');
  expect(JSON.parse(first.stdout)).toMatchObject({ experiment: { name: campaign }, created: 2, updated: 0 });
  const again = await runCli(env, ['export', 'mlflow', campaign, '--tracking-uri', uri]);
  expect(again.stdout).toMatch(
    new RegExp(
      `^exported 2 experiments of ${campaign} to MLflow experiment "${campaign}" \\(id \\d+\\) at ${uri}: 0 created, 2 updated\\n$`,
    ),
  );

  const { runs } = await exported();
  expect(runs).toHaveLength(2);
  const [e0, e1] = runs;
  expect(e0.param).toEqual({ lr: '0.01', hidden: '32', optimizer: 'adam' });
  expect(e0.history).toEqual({
    'train/train_loss': [
      [100, 3],
      [200, 2],
      [300, 1],
    ],
    'public/bits_per_byte': [[0, 1.9]],
    'public/pass_rate': [[0, 0.5]],
    public_score: [[0, 1.9]],
  });
  expect(e0.tag).toMatchObject({
    'flywheel.experiment_id': `${campaign}/inner/e0`,
    'flywheel.campaign': campaign,
    'flywheel.campaign_version': expect.stringMatching(new RegExp(`^${campaign}@`)),
    'flywheel.dataset_version': `${campaign}/base@abcdef012345`,
    'flywheel.suite_version': `${campaign}-suite@1`,
    'flywheel.decision': 'promote accepted (heldout-improvement)',
    'mlflow.runName': `${campaign}/inner/e0`,
  });
  expect(e1.tag['flywheel.status']).toBe('failed');
  expect(e1.history).toEqual({});

  // Nothing held out went out: no held-out item id, its text, or the held-out score, anywhere MLflow stored it.
  const stored = JSON.stringify(runs);
  for (const secret of [SECRET_ID, 'h-secret-7', SECRET_TEXT, String(HELDOUT_SCORE), 'heldout/']) expect(stored).not.toContain(secret);
}, 120_000);

test('bad input is one line and exit 2: an unknown campaign, no tracking URI, a URI that is not http', async () => {
  const unknown = await runCli(env, ['export', 'mlflow', 'no-such-campaign', '--tracking-uri', uri]);
  expect([unknown.status, unknown.stderr.trim().split('\n')]).toEqual([
    2,
    [expect.stringMatching(/^flywheel: unknown campaign "no-such-campaign"/)],
  ]);
  const none = await runCli({ ...env, MLFLOW_TRACKING_URI: '' }, ['export', 'mlflow', campaign]);
  expect([none.status, none.stderr.trim()]).toEqual([
    2,
    'flywheel: no MLflow tracking server: give --tracking-uri URI or set MLFLOW_TRACKING_URI',
  ]);
  const file = await runCli(env, ['export', 'mlflow', campaign, '--tracking-uri', 'file:///tmp/mlruns']);
  expect([file.status, file.stderr.trim()]).toEqual([
    2,
    'flywheel: --tracking-uri: "file:///tmp/mlruns" is not an http(s) URL: only a tracking server\'s REST API is supported',
  ]);
}, 60_000);
