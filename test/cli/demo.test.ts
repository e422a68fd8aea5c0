// The README's quick start: `flywheel demo` on a fresh folder brings up the embedded stack itself, runs the
// built-in campaign (shortened here to 2 experiments), prints held-out before/after and exits 0, leaving nothing running.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { groupMembers } from '../../backends/local/process-liveness';
import { launchDirOf } from '../../backends/run-dir-files';
import { scratchDir } from '../helpers/env';
import { stackEnv } from '../stack/up-process';

const BIN = path.join(__dirname, '..', '..', 'bin', 'flywheel.js');

test('flywheel demo runs the built-in campaign end to end and stops what it started', async () => {
  const home = path.join(scratchDir('demo'), '.flywheel');
  const env = await stackEnv(home);
  const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    execFile(
      process.execPath,
      [BIN, 'demo', '--experiments', '2', '--json'],
      { env, timeout: 280_000, maxBuffer: 32 << 20 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    ),
  );
  expect(r.stderr).toContain('starting the embedded one');
  expect(r.code).toBe(0);
  const result = JSON.parse(r.stdout);
  expect(result.experiments).toBe(2);
  expect(result.heldout.best.bits_per_byte).toBeLessThan(result.heldout.baseline.bits_per_byte);
  expect(Object.keys(result.best.params).sort()).toEqual(['context', 'embed', 'hidden', 'lr', 'weightDecay']);
  // Everything the demo started is gone: the stack file is removed and no trainer process group survives.
  expect(fs.existsSync(path.join(home, 'stack.json'))).toBe(false);
  for (const dir of fs.readdirSync(path.join(home, 'runs')).filter((d) => !d.endsWith('.launch'))) {
    const pid = Number(fs.readFileSync(path.join(launchDirOf(path.join(home, 'runs', dir)), 'job.pid'), 'utf8'));
    expect(groupMembers(pid)).toEqual([]);
  }
}, 300_000);

test('flywheel demo --outer 2: simulated users, two outer iterations, production improves on held-out', async () => {
  const home = path.join(scratchDir('demo-outer'), '.flywheel');
  const env = await stackEnv(home);
  const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    execFile(
      process.execPath,
      [BIN, 'demo', '--outer', '2', '--experiments', '2', '--users-events', '40', '--json'],
      { env, timeout: 400_000, maxBuffer: 32 << 20 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    ),
  );
  expect(r.stderr).toContain('users: 40 events');
  const result = JSON.parse(r.stdout);
  expect(result.iterations.map((i: { status: string }) => i.status)).toEqual(['promoted', expect.stringMatching(/^(promoted|rejected)$/)]);
  expect(result.iterations[0].newFeedback).toBe(0);
  expect(result.iterations[1].newFeedback).toBe(40);
  expect(result.iterations[1].critiques).toBeGreaterThan(0);
  expect(result.iterations[1].datasetExamples).toBeGreaterThan(result.iterations[0].datasetExamples);
  // The exit code says whether production improved over the iterations, and agrees with the figures.
  const [first, last] = result.production;
  expect(result.improved).toBe(last < first);
  expect(r.code).toBe(result.improved ? 0 : 1);
  // What production really scores: the sealed test split before the first promotion and after the last.
  expect(result.test).toEqual({ metric: 'bits_per_byte', before: expect.any(Number), after: expect.any(Number) });
  expect(fs.existsSync(path.join(home, 'stack.json'))).toBe(false);
}, 420_000);
