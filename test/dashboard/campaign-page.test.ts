// The campaign page and the report over rows an outer loop would write (seeded here): the held-out chart has one
// point per measured iteration, dataset versions show their sizes, and the agent's analyses appear.
import { startDashboard, type DashboardServer } from '../../server/dashboard/server';
import { collectReport, reportHtml } from '../../server/dashboard/report';
import { lineChart } from '../../server/dashboard/svg-chart';
import { html } from '../../server/dashboard/html';
import type { DbHandle } from '../../db/client';
import { freshDatabase } from '../helpers/env';

let db: DbHandle;
let server: DashboardServer;

beforeAll(async () => {
  ({ handle: db } = await freshDatabase('dash_campaign'));
  const q = (text: string) => db.pool.query(text);
  await q(
    `INSERT INTO campaigns (id, spec, spec_hash, production_checkpoint_id) VALUES ('c1', '{"name":"c1","selection":{"metric":"exact_match","mode":"max"}}', 'h', 'ckpt-3')`,
  );
  await q("INSERT INTO datasets (id, campaign_id, name) VALUES ('c1/code', 'c1', 'code')");
  await q(
    `INSERT INTO dataset_versions (id, dataset_id, path, content_hash, counts_by_source) VALUES ('c1/code@v1', 'c1/code', '/d', 'x', '{"base": 120, "feedback": 7}')`,
  );
  await q(`INSERT INTO outer_iterations (id, campaign_id, iteration, workflow_id, trigger, status, summary) VALUES
    ('c1/outer/i1', 'c1', 1, 'c1/outer/a', 'cli', 'promoted', '{"reason":"better","heldout":{"metric":"exact_match","candidate":0.4,"incumbent":0.3,"production":0.4}}'),
    ('c1/outer/i2', 'c1', 2, 'c1/outer/a', 'schedule', 'rejected', '{"reason":"gap too wide","heldout":{"metric":"exact_match","candidate":0.38,"incumbent":0.4,"production":0.4}}'),
    ('c1/outer/i3', 'c1', 3, 'c1/outer/b', 'ui', 'running', null)`);
  await q(
    `INSERT INTO decisions (id, campaign_id, kind, rule, reason, figures, accepted) VALUES ('c1/outer/a/promote', 'c1', 'promote', 'heldout-margin', 'held-out +0.1 > 0.02', '{"delta": 0.1}', true)`,
  );
  server = await startDashboard({ db: db.db, port: 0 });
});
afterAll(async () => {
  await server?.close();
  await db?.close();
});

const get = async (path: string) => {
  const r = await fetch(server.url + path);
  return { status: r.status, text: await r.text() };
};

test('the campaign page charts production held-out per iteration and lists versions, iterations and decisions', async () => {
  const { status, text } = await get('/campaigns/c1');
  expect(status).toBe(200);
  // Two measured iterations, each with a production and a candidate point, and the untrained model (iteration 1's
  // incumbent) at iteration 0; the chart's option travels as JSON for the browser to draw.
  const option = JSON.parse(
    /<div class="chart" id="chart-heldout"[^>]*><script type="application\/json">(.*?)<\/script>/.exec(text)![1],
  ) as { series: { name: string; data: number[][] }[] };
  expect(option.series.map((s) => [s.name, s.data])).toEqual([
    [
      'production (held-out)',
      [
        [0, 0.3],
        [1, 0.4],
        [2, 0.4],
      ],
    ],
    [
      'candidate (held-out)',
      [
        [1, 0.4],
        [2, 0.38],
      ],
    ],
    ['inner winner (public)', []],
  ]);
  expect(text).toContain('<td>base: 120, feedback: 7</td>');
  expect(text).toContain('<td class="num">127</td>');
  expect(text).toContain('<td>gap too wide</td>');
  expect(text).toContain('held-out +0.1 &gt; 0.02');
  expect(text).toContain('No analyses yet.');
  expect(text).toContain('No inner loops yet.');
});

test("analyses show on their campaign's page and in its report", async () => {
  await db.pool.query(`INSERT INTO analyses (id, campaign_id, inner_loop_id, start_index, author, prompt_version, text) VALUES
    ('c1/inner/x/a0', 'c1', 'c1/inner/x', 0, 'builtin', 'analyst.v1', 'lr above 0.01 <diverges>'), ('o/inner/y/a0', 'other', 'o/inner/y', 0, 'builtin', 'analyst.v1', 'not this campaign')`);
  const { text } = await get('/campaigns/c1');
  expect(text).toMatch(/<table id="analyses">/);
  expect(text).toContain('lr above 0.01 &lt;diverges&gt;');
  expect(text).not.toContain('not this campaign');
  const report = reportHtml(await collectReport(db.db, 'c1'));
  expect(report).toContain('lr above 0.01 &lt;diverges&gt;');
  expect(report).toContain('gap too wide');
});

test('charts and markup escape what they are given', () => {
  expect(lineChart([])).toMatch(/data-points="0".*no data yet/);
  const svg = lineChart([
    {
      name: '<e1>',
      points: [
        [1, 2],
        [2, 1],
        [3, Number.NaN],
      ],
    },
  ]);
  expect(svg).toMatch(/data-points="2"/);
  expect(svg).toContain('&lt;e1&gt;');
  expect(html`<p>${'<b>&'}</p>`.html).toBe('<p>&lt;b&gt;&amp;</p>');
});
