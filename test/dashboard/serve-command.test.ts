// `flywheel serve` starts the dashboard beside the feedback API, behind the same token; without Temporal it says so
// and serves the pages alone. A real CLI process over a fresh database.
import { spawn, type ChildProcess } from 'node:child_process';
import { FLYWHEEL_BIN } from '../helpers/cli';
import { freshDatabase, scratchDir } from '../helpers/env';
import type { DbHandle } from '../../db/client';

let db: DbHandle;
let child: ChildProcess | undefined;

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child!.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  await db?.close();
});

test('serve: API and dashboard on their ports, both behind FLYWHEEL_API_TOKEN; Ctrl-C stops both', async () => {
  const fresh = await freshDatabase('dash_serve');
  db = fresh.handle;
  await db.pool.query(`INSERT INTO campaigns (id, spec, spec_hash) VALUES ('served', '{"name":"served"}', 'h')`);
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: fresh.url, FLYWHEEL_HOME: scratchDir('serve'), FLYWHEEL_API_TOKEN: 'tok' };
  delete env.TEMPORAL_ADDRESS;
  child = spawn(process.execPath, [FLYWHEEL_BIN, 'serve', '--port', '0', '--dashboard-port', '0'], { env });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d));
  child.stderr!.on('data', (d: Buffer) => (err += d));
  const urls = await new Promise<RegExpMatchArray>((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /feedback API and completions on (\S+), dashboard on (\S+) \(Ctrl-C to stop\)/.exec(out);
      if (m) (clearInterval(timer), resolve(m));
      if (child!.exitCode !== null) (clearInterval(timer), reject(new Error(`serve exited ${child!.exitCode}: ${err}`)));
    }, 100);
  });
  const [, api, dashboard] = urls;
  expect(api).not.toBe(dashboard);
  expect(err).toMatch(/no Temporal endpoint .*without actions/);
  expect((await fetch(`${dashboard}/`)).status).toBe(401);
  const page = await fetch(`${dashboard}/campaigns/served`, { headers: { authorization: 'Bearer tok' } });
  expect(page.status).toBe(200);
  const text = await page.text();
  expect(text).toContain('<h1>Campaign served</h1>');
  expect(text).toContain('Actions need Temporal');
  expect((await fetch(`${api}/healthz`)).status).toBe(200);
  const exited = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));
  child.kill('SIGINT');
  expect(await exited).toBe(0);
});
