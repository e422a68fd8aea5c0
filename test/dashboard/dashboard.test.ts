// The dashboard in a real headless Chromium against a real inner loop: messages for no data, unknown ids and a
// database that is down; the leaderboard against the database; a curve that updates while an experiment runs;
// pause and resume from the page; the token. Screenshots of each main page go to test-artifacts/dashboard/.
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { openDb } from '../../db/client';
import { startDashboard, type DashboardServer } from '../../server/dashboard/server';
import { statusQuery } from '../../contracts/inner-loop';
import { runCli } from '../helpers/cli';
import { scratchDir, temporalAddress } from '../helpers/env';
import { eventually, loopHarness, type LoopHarness, type LoopWorkers } from '../helpers/loop-harness';
import { requires } from '../helpers/requires';
import { fixtureSpec, uniqueName } from '../helpers/specs';
import { launchBrowser, screenshot } from './browser';

requires('chromium');

let harness: LoopHarness;
let workers: LoopWorkers;
let dashboard: DashboardServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  harness = await loopHarness('dash');
  workers = await harness.workers('t-dash');
  const endpoints = {
    temporalAddress: temporalAddress(),
    namespace: 'default',
    databaseUrl: harness.dbUrl,
    taskQueuePrefix: workers.prefix,
    uiUrl: 'http://127.0.0.1:8233',
  };
  dashboard = await startDashboard({ db: harness.db.db, temporal: { client: harness.client, endpoints }, port: 0 });
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
});
afterAll(async () => {
  await browser?.close();
  await dashboard?.close();
  await harness?.close();
});

const rowsOf = (db: LoopHarness['db'], text: string, params: unknown[]) => db.pool.query(text, params).then((r) => r.rows);

test('an empty database, unknown ids and bad addresses each show a clear message', async () => {
  let r = await page.goto(dashboard.url);
  expect(r?.status()).toBe(200);
  await expect(page.textContent('[role=status]')).resolves.toMatch(/No campaigns yet/);
  for (const path of ['/campaigns/nope', '/loops/no%2Fsuch%2Floop', '/experiments/x', '/nowhere', '/actions/explode']) {
    r = await page.goto(dashboard.url + path);
    expect(r?.status()).toBe(404);
    await expect(page.textContent('[role=alert]')).resolves.toMatch(/^no (campaign|inner loop|experiment|page|action) /);
  }
  r = await page.goto(dashboard.url + '/campaigns/%E0%A4%A');
  expect(r?.status()).toBe(400);
  await expect(page.textContent('[role=alert]')).resolves.toMatch(/malformed address/);
});

test('a database that is down is a 503 page with a message, not a stack trace', async () => {
  const down = openDb('postgres://flywheel@127.0.0.1:1/nothing');
  const s = await startDashboard({ db: down.db, port: 0 });
  try {
    for (const path of ['/', '/campaigns/c', '/loops/l']) {
      const r = await page.goto(s.url + path);
      expect(r?.status()).toBe(503);
      await expect(page.textContent('[role=alert]')).resolves.toMatch(/cannot reach PostgreSQL/);
      expect(await page.content()).not.toMatch(/ECONNREFUSED|at .*\.ts:\d+/);
    }
  } finally {
    await s.close();
    await down.close();
  }
});

test('a running loop: live curve, pause and resume from the page, then the leaderboard matches the database', async () => {
  const id = uniqueName('dash');
  const h = await workers.startLoop(
    id,
    fixtureSpec(
      id,
      { steps: 40, sleepMs: 10_000 },
      { budget: { experiments: 2, parallelism: 1 }, batchSize: 1, plateau: { patience: 10 } },
    ),
  );
  const loopUrl = `${dashboard.url}/loops/${encodeURIComponent(h.workflowId)}`;
  // Wait for a running trial with a few points recorded: its curve must then grow while the page stays open. Not the
  // baseline: it trains 10 unpaced steps and may still read as running for a moment after its end, when the page,
  // which draws running runs and finished trials, no longer draws it.
  await eventually('a running experiment with metric points', async () => {
    const r = await rowsOf(
      harness.db,
      "SELECT count(*)::int AS n FROM metric_points m JOIN training_runs t ON t.id = m.run_id JOIN experiments e ON e.id = t.experiment_id WHERE e.inner_loop_id = $1 AND e.status = 'running' AND e.proposer <> 'baseline'",
      [h.workflowId],
    );
    return r[0].n >= 3 ? true : undefined;
  });
  await page.goto(loopUrl);
  expect(await page.getAttribute('#charts', 'data-live')).toBe('1');
  await page.waitForSelector('#chart-curves[data-drawn="1"] svg', { timeout: 30_000 });
  const before = Number(await page.getAttribute('#chart-curves', 'data-points'));
  expect(before).toBeGreaterThan(0);
  // No reload: the page's own polling redraws the chart in place.
  await page.waitForFunction(`Number(document.querySelector('#chart-curves')?.getAttribute('data-points')) > ${before}`, undefined, {
    timeout: 30_000,
  });
  await screenshot(page, 'loop-running');

  // Pause from the page: a confirmation, the result, and the workflow's own status says paused.
  await page.click('button[data-action=pause]');
  await expect(page.textContent('#confirm-text')).resolves.toMatch(/Send "pause" to inner loop/);
  await page.click('#confirm');
  await expect(page.textContent('#result')).resolves.toBe(`pause sent to ${h.workflowId}`);
  expect((await h.query(statusQuery)).phase).toBe('paused');
  await page.click('#back');
  await expect(page.textContent('#phase')).resolves.toBe('paused');
  await page.click('button[data-action=resume]');
  await page.click('#confirm');
  await expect(page.textContent('#result')).resolves.toBe(`resume sent to ${h.workflowId}`);
  expect((await h.query(statusQuery)).phase).not.toBe('paused');
  await page.click('#back');
  expect(await page.textContent('#phase')).not.toBe('paused');

  // A refused update shows the workflow's reason.
  await page.fill('input[name=experiments]', '0');
  await page.click('button[data-action=budget]');
  await page.click('#confirm');
  await expect(page.textContent('[role=alert]')).resolves.toMatch(/did not accept it: .*at least/);

  await h.result();
  await page.goto(loopUrl);
  const shown = await Promise.all((await page.locator('#leaderboard tbody tr').all()).map((tr) => tr.locator('td').allTextContents()));
  const dbRows = await rowsOf(harness.db, 'SELECT id, index, status, public_score FROM experiments WHERE inner_loop_id = $1', [
    h.workflowId,
  ]);
  expect(shown).toHaveLength(dbRows.length);
  // Exact match is maximised: the page ranks the highest public score first, unscored experiments last.
  const expected = [...dbRows].sort((a, b) => (b.public_score ?? -Infinity) - (a.public_score ?? -Infinity) || a.index - b.index);
  expect(shown.map((c) => Number(c[0]))).toEqual(expected.map((r) => r.index));
  expect(shown.map((c) => c[2])).toEqual(expected.map((r) => r.status));
  for (const [i, r] of expected.entries()) if (r.public_score !== null) expect(Number(shown[i][3])).toBeCloseTo(r.public_score, 3);
  await page.waitForSelector('#chart-curves[data-drawn="1"] svg', { timeout: 30_000 });
  expect(await page.getAttribute('#charts', 'data-live')).toBe('0');
  expect(await page.getAttribute('a.temporal', 'href')).toBe(
    `http://127.0.0.1:8233/namespaces/default/workflows/${encodeURIComponent(h.workflowId)}`,
  );
  await screenshot(page, 'loop-finished');

  // The other main pages, reached by their links.
  await page.goto(dashboard.url);
  await page.click(`a[href="/campaigns/${encodeURIComponent(id)}"]`);
  expect(await page.textContent('h1')).toBe(`Campaign ${id}`);
  expect(await page.locator('#inner-loops tbody tr').count()).toBe(1);
  await expect(page.textContent('#decisions')).resolves.toMatch(/select/);
  await screenshot(page, 'campaign');
  await page.goto(dashboard.url);
  await screenshot(page, 'campaigns');
  await page.goto(loopUrl);
  await page.click('#leaderboard tbody tr:first-child a');
  const experimentId = (await page.textContent('h1'))!.replace(/^Experiment /, '');
  const [points] = await rowsOf(
    harness.db,
    "SELECT count(*)::int AS n FROM metric_points m JOIN training_runs t ON t.id = m.run_id WHERE t.experiment_id = $1 AND m.name = 'loss'",
    [experimentId],
  );
  expect(points.n).toBeGreaterThan(0);
  await page.waitForSelector('#chart-curves[data-drawn="1"] svg', { timeout: 30_000 });
  expect(Number(await page.getAttribute('#chart-curves', 'data-points'))).toBe(points.n);
  await screenshot(page, 'experiment');
  for (const f of ['campaigns', 'campaign', 'loop-running', 'loop-finished', 'experiment'])
    expect(fs.statSync(`test-artifacts/dashboard/${f}.png`).size).toBeGreaterThan(1000);

  // `flywheel report`: the same leaderboard and decisions in a self-contained HTML file and in Markdown.
  const out = scratchDir('report');
  const env = { ...process.env, DATABASE_URL: harness.dbUrl, FLYWHEEL_HOME: harness.home };
  const r = await runCli(env, ['report', id, '--out', out, '--json']);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const written = JSON.parse(r.stdout) as { html: string; markdown: string; images: string[] };
  const htmlText = fs.readFileSync(written.html, 'utf8');
  const md = fs.readFileSync(written.markdown, 'utf8');
  expect(htmlText).not.toMatch(/href="\/|<script|src="http/);
  // The loop's curves; no held-out chart, as no outer iteration measured one (and no empty image in its place).
  expect(htmlText.match(/<svg /g)).toHaveLength(1);
  expect(written.images).toHaveLength(1);
  expect(md).not.toMatch(/!\[[^\]]*\]\(\s*\)/);
  for (const row of expected) expect(htmlText).toContain(`<td>${row.status}</td>`);
  expect(htmlText).toContain(h.workflowId);
  expect(md).toContain(`### ${h.workflowId} (completed, ${dbRows.length} experiments, untrained baseline included)`);
  expect(md.match(/^\| -?\d+ \|/gm)).toHaveLength(dbRows.length);
  expect(md).toMatch(/\| select \| yes \|/);
  for (const img of written.images) {
    expect(md).toContain(`](${path.basename(img)})`);
    expect(fs.readFileSync(img, 'utf8')).toMatch(/^<svg /);
  }
  const unknown = await runCli(env, ['report', 'no-such-campaign', '--out', out]);
  expect(unknown.status).toBe(2);
  expect(unknown.stderr).toBe('flywheel: unknown campaign "no-such-campaign": nothing in the database by that id\n');
});

test('proposals are approved and rejected from the loop page; an outer iteration is triggered from the campaign page', async () => {
  const id = uniqueName('dash-approve');
  const h = await workers.startLoop(
    id,
    fixtureSpec(id, { steps: 3, offset: 0 }, { budget: { experiments: 2, parallelism: 2 }, batchSize: 2, requireApproval: true }),
  );
  const pending = await eventually('two proposals awaiting approval', async () => {
    const st = await h.query(statusQuery).catch(() => undefined);
    return st && st.awaitingApproval.length === 2 ? [...st.awaitingApproval].sort() : undefined;
  });
  await page.goto(`${dashboard.url}/loops/${encodeURIComponent(h.workflowId)}`);
  const decide = async (experimentId: string, verb: 'Approve' | 'Reject') => {
    await page.locator('#controls li', { hasText: experimentId }).getByRole('button', { name: verb }).click();
    await expect(page.textContent('#confirm-text')).resolves.toBe(`${verb} proposal ${experimentId} of inner loop ${h.workflowId}.`);
    await page.click('#confirm');
    return page.textContent('#result');
  };
  await expect(decide(pending[0], 'Approve')).resolves.toBe(`approved ${pending[0]}`);
  await page.click('#back');
  await screenshot(page, 'loop-awaiting-approval');
  await expect(decide(pending[1], 'Reject')).resolves.toMatch(new RegExp(`^rejected ${pending[1]}`));
  const result = await h.result();
  expect(result.best?.experimentId).toBe(pending[0]);
  const rows = await rowsOf(harness.db, 'SELECT id, status FROM experiments WHERE id = ANY($1) ORDER BY id', [pending]);
  expect(rows.map((r) => r.status)).toEqual(['succeeded', 'rejected']);

  // An outer iteration triggered from the campaign page is a started outerLoop workflow (stopped here at once:
  // running it through is the outer loop's own tests' job).
  await page.goto(`${dashboard.url}/campaigns/${encodeURIComponent(id)}`);
  await page.click('button[data-action=trigger-outer]');
  await expect(page.textContent('#confirm-text')).resolves.toBe(
    `Start one outer iteration of campaign ${id} now, with its latest campaign version.`,
  );
  await page.click('#confirm');
  const started = /^started (\S+)$/.exec((await page.textContent('#result'))!)![1];
  expect(started).toMatch(new RegExp(`^${id}/outer/\\d{8}-\\d{6}$`));
  const outer = harness.client.workflow.getHandle(started);
  const desc = await outer.describe();
  expect(desc.type).toBe('outerLoop');
  await outer.terminate('dashboard test: only the start is checked').catch(() => undefined);
});

test('with a token: pages need it, a ?token= link signs the browser in, a POST needs the form field', async () => {
  const s = await startDashboard({ db: harness.db.db, port: 0, token: 's3cret' });
  try {
    expect((await fetch(s.url)).status).toBe(401);
    expect((await fetch(s.url, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await fetch(s.url, { headers: { authorization: 'Bearer s3cret' } })).status).toBe(200);
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    const r = await p.goto(`${s.url}/?token=s3cret`);
    expect(r?.status()).toBe(200);
    expect(new URL(p.url()).search).toBe('');
    expect(await p.textContent('h1')).toBe('Campaigns');
    // The cookie is not enough for a POST without the confirmation page's field.
    const post = await p.request.post(`${s.url}/actions/pause`, { form: { loop: 'x' } });
    expect(post.status()).toBe(403);
    await ctx.close();
  } finally {
    await s.close();
  }
});
