// What a researcher sees, in Chromium at 1400 px over a seeded campaign: the loop page's charts (training curves
// with every curve labelled and the winner's always there, optimisation history, parallel coordinates, importance,
// one slice per knob), a leaderboard whose score column stays on screen, the campaign's held-out chart from the
// untrained model on with integer iterations, and the gate's verdict as a table of checks. Screenshots are kept.
import type { Browser, Page } from 'playwright-core';
import { startDashboard, type DashboardServer } from '../../server/dashboard/server';
import type { DbHandle } from '../../db/client';
import { freshDatabase } from '../helpers/env';
import { requires } from '../helpers/requires';
import { launchBrowser, screenshot } from './browser';
import { SEALED, seedPredictions } from '../helpers/predictions-fixture';

requires('chromium');

let db: DbHandle;
let server: DashboardServer;
let browser: Browser;
let page: Page;
const LOOP = 'rv/inner/1';
const N = 60;
/** The winner, e37: best score, so first on page 1 and absent from page 2's rows. */
const WINNER = 37;
const SPACE = {
  lr: { type: 'float', low: 0.0001, high: 0.3, log: true },
  hidden: { type: 'int', low: 16, high: 128, log: true },
  context: { type: 'int', low: 1, high: 8 },
};

beforeAll(async () => {
  ({ handle: db } = await freshDatabase('dash_researcher'));
  const q = (text: string, params: unknown[] = []) => db.pool.query(text, params);
  const spec = { name: 'rv', searchSpace: SPACE, selection: { metric: 'bits_per_byte', mode: 'min' } };
  await q(`INSERT INTO campaigns (id, spec, spec_hash) VALUES ('rv', $1, 'h')`, [JSON.stringify(spec)]);
  await q(
    `INSERT INTO inner_loops (id, campaign_id, dataset_version_id, status, best_experiment_id, summary) VALUES ($1, 'rv', 'v1', 'completed', $2, '{"best":{"publicScore":3.1}}')`,
    [LOOP, `${LOOP}/e${WINNER}`],
  );
  await q(
    `INSERT INTO experiments (id, campaign_id, inner_loop_id, index, dataset_version_id, params, hypothesis, proposer, status, public_score, started_at, finished_at)
    VALUES ($1, 'rv', $2, -1, 'v1', '{}', 'the untrained model', 'baseline', 'succeeded', 8, now(), now())`,
    [`${LOOP}/baseline`, LOOP],
  );
  for (let i = 0; i < N; i++) {
    const lr = 0.0001 * 1.14 ** i;
    const score = i === WINNER ? 3.1 : 3.3 + Math.abs(Math.log10(lr) + 2) + (i % 7) / 50;
    const params = { lr, hidden: 16 + (i % 5) * 20, context: 1 + (i % 8) };
    await q(
      `INSERT INTO experiments (id, campaign_id, inner_loop_id, index, dataset_version_id, params, hypothesis, proposer, status, public_score, started_at, finished_at)
      VALUES ($1, 'rv', $2, $3, 'v1', $4, $5, 'tpe', 'succeeded', $6, now() - interval '1 minute', now())`,
      [
        `${LOOP}/e${i}`,
        LOOP,
        i,
        JSON.stringify(params),
        `TPE after ${i} finished trials: a long hypothesis that must not push the scores off screen `.repeat(3),
        score,
      ],
    );
    await q(
      `INSERT INTO training_runs (id, experiment_id, attempt, backend, run_dir, status) VALUES ($1, $2, 1, 'local', '/tmp', 'succeeded')`,
      [`${LOOP}/e${i}/r1`, `${LOOP}/e${i}`],
    );
    await q(
      `INSERT INTO metric_points (run_id, name, step, value, "offset")
      SELECT $1, m.name, s * 25, CASE m.name WHEN 'loss' THEN 8.0 / (1 + s * 0.1) + $2::float8 WHEN 'tokens' THEN s * 25 * 16 ELSE 4000 END, s * 100 + m.k
      FROM generate_series(1, 40) s, (VALUES ('loss', 0), ('tokens', 1), ('tokens_per_s', 2)) m(name, k)`,
      [`${LOOP}/e${i}/r1`, score - 3],
    );
  }
  await q(
    `INSERT INTO outer_iterations (id, campaign_id, iteration, workflow_id, trigger, status, inner_loop_id, summary) VALUES
    ('rv/outer/i1', 'rv', 1, 'rv/outer/a', 'cli', 'promoted', $1, '{"reason":"better","heldout":{"metric":"bits_per_byte","candidate":3.6,"incumbent":3.94,"production":3.6}}'),
    ('rv/outer/i2', 'rv', 2, 'rv/outer/b', 'cli', 'rejected', null, '{"reason":"gap","heldout":{"metric":"bits_per_byte","candidate":3.65,"incumbent":3.6,"production":3.6}}'),
    ('rv/outer/i3', 'rv', 3, 'rv/outer/c', 'cli', 'promoted', null, '{"reason":"better","heldout":{"metric":"bits_per_byte","candidate":3.3,"incumbent":3.6,"production":3.3}}')`,
    [LOOP],
  );
  const checks = {
    heldoutImprovement: {
      passed: false,
      reason: `held-out bits_per_byte ${'did not improve by the margin; '.repeat(20)}`,
      meanDelta: 0.0123,
      pValue: 0.41,
      n: 200,
    },
    noCategoryRegression: { passed: true, reason: 'no category regressed beyond 0.05', worstRegression: 0.01 },
    publicHeldoutGap: { passed: true, reason: 'gap 0.02 within 0.1', gap: 0.02 },
  };
  await q(
    `INSERT INTO decisions (id, campaign_id, kind, rule, reason, figures, accepted) VALUES ('rv/outer/b/reject', 'rv', 'reject', 'heldoutImprovement', $1, $2, false)`,
    [`rejected by heldoutImprovement: ${checks.heldoutImprovement.reason}`, JSON.stringify({ meanDelta: 0.0123, checks })],
  );
  await seedPredictions(q, LOOP);
  server = await startDashboard({ db: db.db, port: 0 });
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await db?.close();
});

const drawn = (key: string) => page.waitForSelector(`#chart-${key}[data-drawn="1"] svg`, { timeout: 30_000 });
/** The text of every SVG label in a chart. */
const labels = (key: string) => page.locator(`#chart-${key} svg text`).allTextContents();
/** The pairs of a chart's labels among `names` whose boxes intersect on screen. */
const overlaps = (key: string, names: string[]) =>
  page.$$eval(
    `#chart-${key} svg text`,
    (texts, wanted) => {
      const boxes = texts
        .filter((t) => (wanted as string[]).includes(t.textContent ?? ''))
        .map((t) => ({ name: t.textContent, r: t.getBoundingClientRect() }));
      const hit: string[] = [];
      boxes.forEach((a, i) =>
        boxes.slice(i + 1).forEach((b) => {
          if (a.r.left < b.r.right && b.r.left < a.r.right && a.r.top < b.r.bottom && b.r.top < a.r.bottom)
            hit.push(`${a.name} × ${b.name}`);
        }),
      );
      return hit;
    },
    names,
  );
const pageWidth = () => page.evaluate('document.documentElement.scrollWidth') as Promise<number>;

test('the loop page: every curve labelled, the winner among them on any page, and the score column on screen at 1400 px', async () => {
  await page.goto(`${server.url}/loops/${encodeURIComponent(LOOP)}?page=1`);
  for (const k of ['curves', 'history', 'parallel', 'importance', 'slice-lr', 'slice-hidden', 'slice-context']) await drawn(k);
  // Page 2 holds ten runs, none of them the winner: its curve is added and labelled as the winner.
  const names = JSON.parse((await page.getAttribute('#chart-curves', 'data-series'))!) as string[];
  expect(names).toHaveLength(11);
  expect(names).toContain(`★ e${WINNER} (winner)`);
  const text = await labels('curves');
  for (const n of names) expect(text).toContain(n);
  expect(text).toContain('loss (bits per byte)');

  // The score and status columns are inside the viewport; each knob is its own column of rounded values.
  const heads = await Promise.all(
    (await page.locator('#leaderboard thead th').all()).map(async (th) => ({
      text: await th.textContent(),
      right: ((await th.boundingBox())?.x ?? Infinity) + ((await th.boundingBox())?.width ?? 0),
    })),
  );
  const score = heads.find((h) => h.text === 'public bits_per_byte')!;
  expect(score.right).toBeLessThanOrEqual(1400);
  expect(heads.find((h) => h.text === 'status')!.right).toBeLessThanOrEqual(1400);
  expect(heads.map((h) => h.text)).toEqual(expect.arrayContaining(['lr', 'hidden', 'context']));
  expect(await page.textContent('#leaderboard')).not.toContain('{"lr"');
  expect(await pageWidth()).toBeLessThanOrEqual(1400);
  expect(await page.textContent('#counts')).toMatch(/^60 experiments \+ 1 untrained baseline/);

  await screenshot(page, 'researcher-loop');
  // No two curve end labels overlap on screen.
  expect(await overlaps('curves', names)).toEqual([]);
  // An integer knob's ticks are integers; importance says how many trials it used.
  // (The scores run from 3 to 5.5, so 1.5, 2.5, 6.5 and 7.5 could only be the knob's ticks.)
  const ticks = await labels('slice-context');
  expect(ticks).toEqual(expect.arrayContaining(['1', '2', '6', '7', '8']));
  for (const half of ['1.5', '2.5', '6.5', '7.5']) expect(ticks).not.toContain(half);
  expect(await labels('importance')).toContain(`from ${N} scored trials`);

  // The optimisation history: one point per trial and the best-so-far line, labelled.
  expect(await labels('history')).toContain('best so far');
  expect(Number(await page.getAttribute('#chart-history', 'data-points'))).toBe(2 * N);

  // Log scale and the tokens axis redraw the curves in place, still labelled.
  await page.check('input[name=log]');
  await page.selectOption('select[name=x]', 'tokens');
  await page.waitForFunction(
    "Array.from(document.querySelectorAll('#chart-curves svg text')).some((t) => t.textContent === 'tokens seen')",
    undefined,
    { timeout: 30_000 },
  );
  for (const n of names) expect(await labels('curves')).toContain(n);
  await screenshot(page, 'researcher-loop-tokens-log');
}, 120_000);

test('the charts endpoint refuses an unknown axis with a clear message', async () => {
  const r = await fetch(`${server.url}/loops/${encodeURIComponent(LOOP)}/charts.json?x=furlongs`);
  expect(r.status).toBe(400);
  expect(await r.text()).toContain('x must be step, tokens or time, got &quot;furlongs&quot;');
});

test('the campaign page: held-out from the untrained model on, integer iterations, every curve labelled; the gate as a table of checks', async () => {
  await page.goto(`${server.url}/campaigns/rv`);
  await drawn('heldout');
  const option = JSON.parse((await page.textContent('#chart-heldout script'))!) as {
    xAxis: { min: number; minInterval: number };
    series: { name: string; data: [number, number][] }[];
  };
  expect(option.xAxis).toMatchObject({ min: 0, minInterval: 1 });
  // Iteration 0 is the untrained model: the first gate's incumbent.
  expect(option.series[0].data[0]).toEqual([0, 3.94]);
  const text = await labels('heldout');
  for (const s of option.series) expect(text).toContain(s.name);
  // Production and candidate both end at 3.3: their end labels are moved apart, not drawn over each other.
  expect(
    await overlaps(
      'heldout',
      option.series.map((s) => s.name),
    ),
  ).toEqual([]);
  expect(text).toContain('outer iteration (0 = untrained model)');
  // Integer iteration ticks from 0 (the scores are all above 3, so these are the iteration axis's).
  expect(text).toEqual(expect.arrayContaining(['0', '1', '2', '3']));
  for (const half of ['0.5', '1.5', '2.5']) expect(text).not.toContain(half);

  const rows = await Promise.all(
    (await page.locator('#decisions table.checks tbody tr').all()).map((tr) => tr.locator('td').allTextContents()),
  );
  expect(rows.map((r) => [r[0], r[1]])).toEqual([
    ['heldoutImprovement', 'FAIL'],
    ['noCategoryRegression', 'pass'],
    ['publicHeldoutGap', 'pass'],
  ]);
  expect(rows[0][3]).toContain('pValue 0.41');
  expect(await page.textContent('#experiment-count')).toBe('60 experiments (the untrained baseline of 1 inner loop not counted)');
  expect(await pageWidth()).toBeLessThanOrEqual(1400);
  await screenshot(page, 'researcher-campaign');
}, 60_000);

test('the experiment page: configuration as columns, its curve labelled with its public score beside it', async () => {
  await page.goto(`${server.url}/experiments/${encodeURIComponent(`${LOOP}/e3`)}`);
  await drawn('curves');
  expect(await page.$$eval('#configuration thead th', (ths) => ths.map((t) => t.textContent))).toEqual(['lr', 'hidden', 'context']);
  const text = await labels('curves');
  expect(text).toContain('e3');
  // The public score (bits per byte, like the loss) is drawn across the curve, labelled.
  expect(text.some((t) => /^public \d\.\d+/.test(t))).toBe(true);
  // Eval metrics as figures, not JSON with 16-digit floats.
  const evalText = (await page.textContent('#eval-results'))!;
  expect(evalText).toContain('category.text0.5');
  expect(evalText).not.toMatch(/\d\.\d{6,}|\{"/);

  // The public items, each with the output, the reference, the grade and a diff; nothing of the sealed splits.
  const rows = () =>
    page.locator('#predictions tbody tr').evaluateAll((trs) => trs.map((tr) => (tr as unknown as { innerText: string }).innerText));
  expect(await rows()).toHaveLength(4);
  expect(await page.textContent('#predictions')).toContain('Hello, Bob!');
  expect(await page.locator('#predictions del').allTextContents()).toEqual(expect.arrayContaining(['9', 'Ada']));
  expect(await page.locator('#predictions ins').allTextContents()).toEqual(expect.arrayContaining(['6', 'Bob']));
  for (const s of SEALED) expect(await page.content()).not.toContain(s);
  expect(await pageWidth()).toBeLessThanOrEqual(1400);
  await screenshot(page, 'researcher-experiment');
  // Filtered by verdict and category from the page's form.
  await page.selectOption('select[name=verdict]', 'fail');
  await Promise.all([page.waitForNavigation(), page.click('form.filters button')]);
  expect((await rows()).map((r) => r.split('\t')[0])).toEqual(['greet', 'mul']);
  await page.selectOption('select[name=category]', 'text');
  await Promise.all([page.waitForNavigation(), page.click('form.filters button')]);
  expect((await rows()).map((r) => r.split('\t')[0])).toEqual(['greet']);
  expect(await page.textContent('#predictions-count')).toBe('1 item');
}, 60_000);

test('the compare page: two experiments item by item, what changed, and never a sealed item', async () => {
  const a = encodeURIComponent(`${LOOP}/e3`);
  const b = encodeURIComponent(`${LOOP}/e37`);
  await page.goto(`${server.url}/compare?a=${a}&b=${b}`);
  expect(await page.textContent('#compare-count')).toBe('4 shared items: 1 better, 1 worse, 2 same');
  const changes = await page
    .locator('#comparison tbody tr')
    .evaluateAll((trs) => trs.map((tr) => [tr.children[0].textContent, tr.children[2].textContent]));
  expect(changes).toEqual([
    ['add', 'same'],
    ['fn', 'worse'],
    ['greet', 'same'],
    ['mul', 'better'],
  ]);
  for (const s of SEALED) expect(await page.content()).not.toContain(s);
  expect(await pageWidth()).toBeLessThanOrEqual(1400);
  await screenshot(page, 'researcher-compare');
  const r = await page.goto(`${server.url}/compare?a=${a}&b=nope`);
  expect(r?.status()).toBe(404);
  await expect(page.textContent('[role=alert]')).resolves.toMatch(/no experiment, nor campaign with a production model, "nope"/);
}, 60_000);
