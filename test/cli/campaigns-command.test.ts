// Finding things: `flywheel campaigns` lists the campaigns from PostgreSQL (experiments without the untrained
// baselines), and `flywheel status` with no campaign lists the loops running now from Temporal.
import type { Client, Connection } from '@temporalio/client';
import { loopSearchAttributes } from '../../services/campaign-loops';
import type { DbHandle } from '../../db/client';
import { runCli } from '../helpers/cli';
import { freshDatabase, scratchDir, temporalAddress, temporalClient } from '../helpers/env';
import { uniqueName } from '../helpers/specs';

let h: DbHandle;
let dbUrl: string;
let client: Client;
let connection: Connection;
const env = () => ({
  ...process.env,
  DATABASE_URL: dbUrl,
  TEMPORAL_ADDRESS: temporalAddress(),
  FLYWHEEL_HOME: scratchDir('campaigns-cli'),
});

beforeAll(async () => {
  ({ handle: h, url: dbUrl } = await freshDatabase('campaigns_cli'));
  ({ client, connection } = await temporalClient());
  const q = (text: string, params: unknown[] = []) => h.pool.query(text, params);
  await q(`INSERT INTO campaigns (id, spec, spec_hash, production_checkpoint_id, created_at) VALUES
    ('alpha', '{"name":"alpha"}', 'a', 'alpha/outer/i1/inner/e2/r1/step-300', now() - interval '1 day'), ('beta', '{"name":"beta"}', 'b', null, now())`);
  await q(`INSERT INTO inner_loops (id, campaign_id, dataset_version_id, status) VALUES ('alpha/inner/1', 'alpha', 'v', 'completed')`);
  await q(`INSERT INTO experiments (id, campaign_id, inner_loop_id, index, dataset_version_id, params, proposer, status) VALUES
    ('alpha/inner/1/baseline', 'alpha', 'alpha/inner/1', -1, 'v', '{}', 'baseline', 'succeeded'),
    ('alpha/inner/1/e0', 'alpha', 'alpha/inner/1', 0, 'v', '{}', 'tpe', 'succeeded'),
    ('alpha/inner/1/e1', 'alpha', 'alpha/inner/1', 1, 'v', '{}', 'tpe', 'running')`);
});
afterAll(async () => {
  await connection?.close();
  await h?.close();
});

test('campaigns: newest first, experiments without the baseline, the production checkpoint; a bad option is one line and exit 2', async () => {
  const r = await runCli(env(), ['campaigns']);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const lines = r.stdout.trimEnd().split('\n');
  expect(lines[0]).toMatch(/^campaign +created \(UTC\) +inner +outer +experiments +running +last outer +production checkpoint$/);
  expect(lines[1]).toMatch(/^beta +\d{4}-\d\d-\d\d \d\d:\d\d +0 +0 +0 +0 +– +–$/);
  expect(lines[2]).toMatch(/^alpha +\d{4}-\d\d-\d\d \d\d:\d\d +1 +0 +2 +1 +– +alpha\/outer\/i1\/inner\/e2\/r1\/step-300$/);
  expect(lines[3]).toBe("1–2 of 2 campaigns; experiments exclude each inner loop's untrained baseline");
  const json = JSON.parse((await runCli(env(), ['campaigns', '--json', '--limit', '1', '--offset', '1'])).stdout) as {
    total: number;
    campaigns: { id: string; experiments: number; baselines: number }[];
  };
  expect(json.total).toBe(2);
  expect(json.campaigns.map((c) => [c.id, c.experiments, c.baselines])).toEqual([['alpha', 2, 1]]);
  const bad = await runCli(env(), ['campaigns', '--limit', 'many']);
  expect(bad.status).toBe(2);
  expect(bad.stderr).toBe('flywheel: --limit must be an integer >= 1, got "many"\n');
}, 60_000);

test('status with no campaign lists the loops running now', async () => {
  const campaign = uniqueName('listed');
  // A loop no worker picks up stays running: enough for the listing.
  const handle = await client.workflow.start('innerLoop', {
    taskQueue: `${campaign}-nobody`,
    workflowId: `${campaign}/inner/1`,
    args: [{ campaignId: campaign }],
    typedSearchAttributes: loopSearchAttributes(campaign, 'inner'),
  });
  try {
    let out = '';
    for (let i = 0; i < 40 && !out.includes(handle.workflowId); i++) {
      const r = await runCli(env(), ['status']);
      expect(r.status).toBe(0);
      out = r.stdout;
      if (!out.includes(handle.workflowId)) await new Promise((res) => setTimeout(res, 250));
    }
    expect(out).toMatch(
      new RegExp(`^${campaign} +inner +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d +${handle.workflowId.replace(/\//g, '\\/')}$`, 'm'),
    );
    expect(out).toMatch(/\d+ running; `flywheel status CAMPAIGN` follows one/);
  } finally {
    await handle.terminate('test over');
  }
}, 90_000);
