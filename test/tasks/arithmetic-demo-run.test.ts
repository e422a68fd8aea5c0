// `flywheel demo --task arithmetic` on a fresh folder: the embedded stack comes up, the task's files are generated
// and registered by child `flywheel dataset add` and `flywheel suite add`, `flywheel run` trains, and the held-out
// pass rate before and after is printed overall and per category; the exit code says whether it rose.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { scratchDir } from '../helpers/env';
import { stackEnv } from '../stack/up-process';

const BIN = path.join(__dirname, '..', '..', 'bin', 'flywheel.js');

test('flywheel demo --task arithmetic goes through dataset add, suite add and run, and the held-out pass rate rises', async () => {
  const home = path.join(scratchDir('demo-arithmetic'), '.flywheel');
  const env = await stackEnv(home);
  const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    execFile(
      process.execPath,
      [BIN, 'demo', '--task', 'arithmetic', '--experiments', '2', '--json'],
      { env, timeout: 400_000, maxBuffer: 32 << 20 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    ),
  );
  // Each child's own lines (progress, counts) come between its command and the id it prints.
  expect(r.stderr).toMatch(/\$ flywheel dataset add arithmetic \S+\/train\.jsonl\n(.*\n)*?arithmetic@[0-9a-f]{12}\n/);
  expect(r.stderr).toMatch(/\$ flywheel suite add \S+\/suite\.json\n(.*\n)*?arithmetic@1\n/);
  expect(r.stderr).toMatch(/\$ flywheel run \S+\/arithmetic\.yaml/);
  const out = JSON.parse(r.stdout);
  expect(out.result.experiments).toBe(2);
  const { before, after } = out.heldout;
  expect(before.pass_rate).toBeLessThan(0.05);
  expect(after.pass_rate).toBeGreaterThan(before.pass_rate + 0.1);
  for (const c of ['category.carry', 'category.no-carry']) expect(typeof after[c]).toBe('number');
  expect(r.code).toBe(0);
  // The files a user would have: generated under FLYWHEEL_HOME, and the stack the demo started is gone.
  expect(fs.existsSync(path.join(home, 'demo', out.campaign, 'train.jsonl'))).toBe(true);
  expect(fs.existsSync(path.join(home, 'stack.json'))).toBe(false);
}, 420_000);
