// The README's quick start: `flywheel demo` on a fresh folder brings up the embedded stack itself, runs the
// built-in campaign (shortened here to 2 experiments), prints held-out before/after and exits 0, leaving nothing running.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { groupMembers } from '../../backends/local/process-liveness';
import { scratchDir } from '../helpers/env';
import { stackEnv } from '../stack/up-process';

const BIN = path.join(__dirname, '..', '..', 'bin', 'flywheel.js');

test('flywheel demo runs the built-in campaign end to end and stops what it started', async () => {
  const home = path.join(scratchDir('demo'), '.flywheel');
  const env = await stackEnv(home);
  const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    execFile(process.execPath, [BIN, 'demo', '--experiments', '2', '--json'], { env, timeout: 280_000, maxBuffer: 32 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
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
  for (const dir of fs.readdirSync(path.join(home, 'runs'))) {
    const pid = Number(fs.readFileSync(path.join(home, 'runs', dir, 'job.pid'), 'utf8'));
    expect(groupMembers(pid)).toEqual([]);
  }
}, 300_000);
