// A seeded demo gives the same figures on the same machine: `flywheel demo --outer 2` twice, each in a fresh home,
// prints the same lines, ids aside. Not twice in one home: a suite version's held-out budget is shared by every
// campaign on it (docs/eval-integrity.md), so a second run there finds units the first spent, and its gate may
// rightly answer from another split. The pruner's independence from
// parallel completion order is shown by test/workflows/seeded-loop-reproducible.test.ts (cheaper than two stacks).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { scratchDir } from '../helpers/env';
import { stackEnv } from '../stack/up-process';

const BIN = path.join(__dirname, '..', '..', 'bin', 'flywheel.js');

function demo(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [BIN, 'demo', '--outer', '2', '--experiments', '4', '--users-events', '40', '--seed', '3'],
      { env, timeout: 420_000, maxBuffer: 32 << 20 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    ),
  );
}

test('two runs of the seeded outer demo print identical figures', async () => {
  const first = await demo(await stackEnv(path.join(scratchDir('demo-repro-1'), '.flywheel')));
  const second = await demo(await stackEnv(path.join(scratchDir('demo-repro-2'), '.flywheel')));
  expect(first.stderr).toMatch(/campaign builtin-demo@[0-9a-f]{12} \(new, so no earlier trials or feedback\), seed 3/);
  expect(second.stderr).toMatch(/campaign builtin-demo@[0-9a-f]{12} \(new, so no earlier trials or feedback\), seed 3/);
  // Figures only: the campaign's name is part of every id, and of each dataset version's content address (its hash
  // covers the parent version's id, `<campaign>/code@…`), so those hashes differ while the example counts agree; so does
  // the campaign version's (the spec's name is part of what it hashes).
  const figures = (out: string) =>
    out
      .replaceAll('builtin-demo-2', 'builtin-demo')
      .replace(/\/code@[0-9a-f]{12}/g, '/code@<hash>')
      .replace(/builtin-demo@[0-9a-f]{12}/g, 'builtin-demo@<version>');
  expect(first.stdout).toMatch(/production held-out bits_per_byte: \d\.\d{3} → \d\.\d{3}/);
  expect(figures(second.stdout)).toBe(figures(first.stdout));
  expect(second.code).toBe(first.code);
}, 900_000);
