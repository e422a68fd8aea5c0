// Red team: a trainer with `trainer.network: true` (the flag the docs give for downloading weights) tries to reach the
// stack. It must get out to a stand-in model hub, which the test serves from a network namespace of its own on an
// address outside the loopback (as a real hub is), and nothing of this host: not PostgreSQL, not Temporal, not a
// dashboard-like server listening on every address, not slirp's gateway to the host's loopback, not link-local
// metadata. `predict` of the same campaign gets no network at all: it holds held-out prompts.
// On the code before the egress namespace, `network: true` shared the host's network: every stack target answered.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { isolatedEntry, trainerSetupOf } from '../../activities/training/trainer-isolation';
import { parseSpec } from '../../tasks/task-spec';
import { temporalAddress } from '../helpers/env';
import { requires } from '../helpers/requires';

requires('egress');

const tag = crypto.randomBytes(2).toString('hex');
const ns = `fwhub-${tag}`;
const subnet = `10.${200 + (parseInt(tag, 16) % 50)}.${parseInt(tag.slice(2), 16) % 250}`;
const hubIp = `${subnet}.2`;
const hostSideIp = `${subnet}.1`;
const HUB_PORT = 8080;

let root: string;
let hub: ChildProcess;
let dashboard: http.Server;
let dashPort: number;

/** The planted trainer: tries every target, writes what answered. Plain Node, no dependencies. */
const PROBE = `
const net = require('node:net'); const http = require('node:http'); const fs = require('node:fs');
const [entry, ...rest] = process.argv.slice(2);
const out = entry === 'train' ? rest[rest.indexOf('--run-dir') + 1] + '/reached.json' : rest[rest.indexOf('--out') + 1];
const targets = JSON.parse(process.env.FW_TARGETS);
const tcp = (host, port) => new Promise((resolve) => {
  const s = net.connect({ host, port, timeout: 3000 });
  s.on('connect', () => { s.destroy(); resolve('open'); });
  s.on('timeout', () => { s.destroy(); resolve('timeout'); });
  s.on('error', (e) => resolve(e.code));
});
const get = (url) => new Promise((resolve) => {
  http.get(url, { timeout: 5000 }, (r) => { let b = ''; r.on('data', (c) => (b += c)); r.on('end', () => resolve(b)); })
    .on('error', (e) => resolve('error ' + e.code)).on('timeout', function () { this.destroy(); resolve('timeout'); });
});
(async () => {
  const seen = { hub: await get(targets.hub) };
  for (const [name, [host, port]] of Object.entries(targets.tcp)) seen[name] = await tcp(host, port);
  fs.writeFileSync(out, JSON.stringify(seen));
})();
`;

function sh(cmd: string, args: string[]): void {
  execFileSync(cmd, args, { stdio: 'pipe' });
}

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'redteam-egress-'));
  fs.chmodSync(root, 0o755);
  fs.writeFileSync(path.join(root, 'probe.js'), PROBE);
  // The stand-in hub: its own network namespace, reached from the host over a veth pair (as the internet would be).
  sh('ip', ['netns', 'add', ns]);
  sh('ip', ['link', 'add', `fwh${tag}a`, 'type', 'veth', 'peer', 'name', `fwh${tag}b`]);
  sh('ip', ['link', 'set', `fwh${tag}b`, 'netns', ns]);
  sh('ip', ['addr', 'add', `${hostSideIp}/24`, 'dev', `fwh${tag}a`]);
  sh('ip', ['link', 'set', `fwh${tag}a`, 'up']);
  sh('ip', ['netns', 'exec', ns, 'ip', 'addr', 'add', `${hubIp}/24`, 'dev', `fwh${tag}b`]);
  sh('ip', ['netns', 'exec', ns, 'ip', 'link', 'set', `fwh${tag}b`, 'up']);
  const serve = `require('node:http').createServer((q, r) => r.end('hub-ok')).listen(${HUB_PORT}, '${hubIp}', () => console.log('up'))`;
  hub = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e', serve], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => hub.stdout!.once('data', () => resolve()));
  // A dashboard-like server of the stack's, on every address of this host.
  dashboard = http.createServer((_q, r) => r.end('dashboard'));
  await new Promise<void>((resolve) => dashboard.listen(0, '0.0.0.0', resolve));
  dashPort = (dashboard.address() as { port: number }).port;
});

afterAll(async () => {
  hub?.kill('SIGKILL');
  await new Promise((resolve) => dashboard?.close(resolve));
  spawnSync('ip', ['link', 'del', `fwh${tag}a`]);
  spawnSync('ip', ['netns', 'del', ns]);
  fs.rmSync(root, { recursive: true, force: true });
});

/** This host's own addresses outside the loopback (the dashboard answers on each). */
function hostAddresses(): string[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .filter((a) => a && !a.internal && a.family === 'IPv4')
    .map((a) => a!.address);
}

function targets(): { hub: string; tcp: Record<string, [string, number]> } {
  const pg = new URL(process.env.FLYWHEEL_TEST_PG_URL!);
  const [tHost, tPort] = temporalAddress().split(':');
  const tcp: Record<string, [string, number]> = {
    postgres: [pg.hostname, Number(pg.port || 5432)],
    temporal: [tHost, Number(tPort)],
    dashboardLoopback: ['127.0.0.1', dashPort],
    slirpGatewayToHostLoopback: ['10.0.2.2', dashPort],
    metadata: ['169.254.169.254', 80],
  };
  for (const [i, a] of hostAddresses().entries()) tcp[`dashboardOnHostAddress${i}`] = [a, dashPort];
  return { hub: `http://${hubIp}:${HUB_PORT}/`, tcp };
}

function runEntry(entry: 'train' | 'predict'): Record<string, string> {
  const spec = parseSpec({
    name: 'egress',
    trainer: { command: [process.execPath, path.join(root, 'probe.js')], network: true, env: { FW_TARGETS: JSON.stringify(targets()) } },
    searchSpace: { lr: { type: 'float', low: 0.001, high: 0.01 } },
  });
  const dir = fs.mkdtempSync(path.join(root, `${entry}-`));
  const home = path.join(root, 'home');
  fs.mkdirSync(home, { recursive: true });
  const args = entry === 'train' ? ['--run-dir', dir] : ['--checkpoint', dir, '--prompts', dir, '--out', path.join(dir, 'reached.json')];
  const cmd = isolatedEntry(trainerSetupOf(spec, home), entry, args, { cwd: dir, data: [], readWrite: [dir] });
  expect(cmd.sandbox).toBe('bubblewrap');
  const r = spawnSync(cmd.argv[0], cmd.argv.slice(1), { encoding: 'utf8', env: {}, timeout: 60_000 });
  expect(r.stderr).toBe('');
  return JSON.parse(fs.readFileSync(path.join(dir, 'reached.json'), 'utf8')) as Record<string, string>;
}

test('a networked trainer reaches the hub outside this host, and nothing of the stack', () => {
  const seen = runEntry('train');
  expect(seen.hub).toBe('hub-ok');
  const open = Object.entries(seen).filter(([name, v]) => name !== 'hub' && v === 'open');
  expect(open).toEqual([]);
}, 120_000);

test("the same campaign's predict has no network: neither the hub nor the stack", () => {
  const seen = runEntry('predict');
  expect(seen.hub).not.toBe('hub-ok');
  expect(Object.entries(seen).filter(([name, v]) => name !== 'hub' && v === 'open')).toEqual([]);
}, 120_000);
