// `flywheel up` from an empty home, then again from the home it left: the workflow and the row written during
// the first run are found by the second; Ctrl-C stops every process the stack started, every time.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { Client as PgClient } from 'pg';
import { scratchDir } from '../helpers/env';
import { stackStatePath } from '../../stack/stack-state';
import { livePids, processesMentioning, spawnUp, stackEnv, type UpProcess } from './up-process';

const started: UpProcess[] = [];
afterAll(() => started.forEach((u) => u.killAll()));

const home = scratchDir('stack-restart');
const workflowId = `stack-probe-${crypto.randomBytes(4).toString('hex')}`;
const campaignId = `stack-probe-${crypto.randomBytes(4).toString('hex')}`;
let env: NodeJS.ProcessEnv;

async function up(): Promise<UpProcess> {
  const u = spawnUp(home, env);
  started.push(u);
  await u.waitFor(/^flywheel is up$/, { timeoutMs: 180_000 });
  return u;
}

async function withTemporal<T>(u: UpProcess, fn: (client: Client) => Promise<T>): Promise<T> {
  const connection = await Connection.connect({ address: u.state()!.temporal.address });
  try {
    return await fn(new Client({ connection }));
  } finally {
    await connection.close();
  }
}

async function withPg<T>(u: UpProcess, fn: (pg: PgClient) => Promise<T>): Promise<T> {
  const pg = new PgClient({ connectionString: u.state()!.postgres.url });
  await pg.connect();
  try {
    return await fn(pg);
  } finally {
    await pg.end();
  }
}

/** SIGINT, as Ctrl-C sends it: `up` exits 0, and nothing it started is left. */
async function interrupt(u: UpProcess): Promise<void> {
  const pids = [...u.pids];
  expect(pids.length).toBeGreaterThanOrEqual(6); // up, temporal, postgres, three workers
  u.child.kill('SIGINT');
  expect(await u.exited).toEqual({ code: 0, signal: null });
  expect(livePids(pids)).toEqual([]);
  expect(processesMentioning(home)).toEqual([]);
  expect(fs.existsSync(stackStatePath(home))).toBe(false);
}

describe('flywheel up, cold then warm', () => {
  beforeAll(async () => {
    env = await stackEnv(home);
  });

  let first: UpProcess;
  it('starts from an empty home and reports each component', async () => {
    first = await up();
    const out = first.lines.join('\n');
    expect(out).toMatch(
      new RegExp(
        `✓ temporal  127\\.0\\.0\\.1:${env.FLYWHEEL_TEMPORAL_PORT} \\(ui http://127\\.0\\.0\\.1:${env.FLYWHEEL_TEMPORAL_UI_PORT}, namespace default\\)`,
      ),
    );
    expect(out).toMatch(
      /✓ postgres  postgres:\/\/flywheel_app:\*\*\*@127\.0\.0\.1:\d+\/flywheel \(embedded, [1-9]\d* migration\(s\) applied\)/,
    );
    for (const f of ['orchestration', 'training', 'eval']) expect(out).toMatch(new RegExp(`✓ worker ${f}  queue flywheel-${f} `));
    const state = first.state()!;
    expect(state.temporal.pid).toBeDefined();
    expect(state.postgres.pid).toBeDefined();
    expect(Object.keys(state.workers).sort()).toEqual(['eval', 'orchestration', 'training']);

    // Leave something behind in both stores: an open workflow and a row.
    await withTemporal(first, (c) => c.workflow.start('flywheelStackProbe', { taskQueue: 'flywheel-orchestration', workflowId }));
    await withPg(first, (pg) => pg.query(`INSERT INTO campaigns (id, spec, spec_hash) VALUES ($1, '{}', 'probe')`, [campaignId]));
  }, 240_000);

  it('stops every process it started on Ctrl-C', () => interrupt(first), 60_000);

  it('starts again from the existing home and finds the workflow and the row', async () => {
    const second = await up();
    expect(second.lines.join('\n')).toMatch(/\(embedded, 0 migration\(s\) applied\)/);
    await withTemporal(second, async (c) => {
      expect((await c.workflow.getHandle(workflowId).describe()).status.name).toBe('RUNNING');
      const found = [];
      for await (const w of c.workflow.list({ query: `WorkflowId = '${workflowId}'` })) found.push(w.workflowId);
      expect(found).toEqual([workflowId]);
      const { customAttributes } = await c.connection.operatorService.listSearchAttributes({ namespace: 'default' });
      expect(Object.keys(customAttributes ?? {})).toEqual(expect.arrayContaining(['CampaignId', 'LoopKind', 'Iteration', 'BestScore']));
      await c.workflow.getHandle(workflowId).terminate('test done');
    });
    const rows = await withPg(second, (pg) => pg.query('SELECT id FROM campaigns WHERE id = $1', [campaignId]));
    expect(rows.rowCount).toBe(1);
    await interrupt(second);
  }, 240_000);
});
