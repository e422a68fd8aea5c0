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
  // Two iterations: the first promoted (held-out and test scored), the second rejected (production's held-out again).
  const summary = (heldout: number, test?: number) =>
    JSON.stringify({
      heldout: { metric: 'pass_rate', candidate: 0.5, incumbent: heldout, production: heldout },
      ...(test === undefined ? {} : { test: { metric: 'pass_rate', production: test, items: 20 } }),
    });
  await q(
    `INSERT INTO outer_iterations (id, campaign_id, iteration, workflow_id, trigger, status, summary) VALUES
    ('alpha/outer/i1', 'alpha', 1, 'w', 'manual', 'promoted', $1), ('alpha/outer/i2', 'alpha', 2, 'w', 'manual', 'rejected', $2)`,
    [summary(0.4125), summary(0.4125)],
  );
  await q(
    `UPDATE outer_iterations SET summary = jsonb_set(summary, '{test}', '{"metric":"pass_rate","production":0.3875,"items":20}') WHERE id = 'alpha/outer/i1'`,
  );
  await q(`INSERT INTO decisions (id, campaign_id, kind, rule, reason, figures, accepted, created_at) VALUES
    ('alpha/outer/i1/gate', 'alpha', 'promote', 'allChecksPassed', 'promoted', '{"checks":{}}', true, now() - interval '1 hour'),
    ('alpha/outer/i2/gate', 'alpha', 'reject', 'heldoutImprovement', 'rejected by heldoutImprovement: below the margin', '{"checks":{}}', false, now())`);
});
afterAll(async () => {
  await connection?.close();
  await h?.close();
});

test('campaigns: newest first, experiments without the baseline, production with its held-out and test scores, the last gate; a bad option is one line and exit 2', async () => {
  const r = await runCli(env(), ['campaigns']);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const lines = r.stdout.trimEnd().split('\n');
  expect(lines[0]).toMatch(/^campaign +experiments +production +metric +held-out +test +last gate$/);
  expect(lines[1]).toMatch(/^beta +0 +– +– +– +– +–$/);
  // The checkpoint without the campaign's prefix, its tail when longer than the column; the last gate's verdict.
  expect(lines[2]).toMatch(/^alpha +2 \(1 running\) +…\/inner\/e2\/r1\/step-300 +pass_rate +0\.4125 +0\.3875 +rejected$/);
  expect(lines[3]).toBe("1–2 of 2 campaigns; experiments exclude untrained baselines; held-out and test: the production model's");
  expect(Math.max(...lines.slice(0, 3).map((l) => l.length))).toBeLessThanOrEqual(100);
  const json = JSON.parse((await runCli(env(), ['campaigns', '--json', '--limit', '1', '--offset', '1'])).stdout) as {
    total: number;
    campaigns: {
      id: string;
      experiments: number;
      baselines: number;
      heldout_production: number;
      test_production: number;
      last_gate: { kind: string; rule: string };
    }[];
  };
  expect(json.total).toBe(2);
  expect(json.campaigns.map((c) => [c.id, c.experiments, c.baselines])).toEqual([['alpha', 2, 1]]);
  expect(json.campaigns[0]).toMatchObject({
    heldout_production: 0.4125,
    test_production: 0.3875,
    last_gate: { kind: 'reject', rule: 'heldoutImprovement' },
  });
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
