// Red team: a trainer that is root on the host (as the sandbox's `nobody` was, mapped to the worker's root) ignores
// RLIMIT_NPROC and owns whatever it writes as root. Now, under a worker running as root, each run's sandbox is an
// unprivileged host uid of its own with no capabilities and no_new_privs, and `trainer.limits` reach the kernel:
// a fork bomb stops at `processes`, a file stops at `diskMb`, the sandbox's /tmp (memory) at its size, open files at
// `openFiles`, and a setuid program gives no way back to root. What only a watcher can see (resident memory, bytes
// and files across the run directory, log bytes) is the local backend's: test/redteam/launcher-files.test.ts.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isolatedEntry, trainerSetupOf } from '../../activities/training/trainer-isolation';
import { parseSpec } from '../../tasks/task-spec';
import { requires } from '../helpers/requires';

requires('bubblewrap');

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'redteam-identity-'));
fs.chmodSync(root, 0o755);
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** A planted trainer in sh: runs the attack named by $ATTACK and writes what it got to its run directory. */
const ATTACKS = `#!/bin/sh
d=$3
case "$ATTACK" in
identity)
  { id -u; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status; su -c 'id -u' root </dev/null 2>&1 | head -1; } >"$d/out" 2>&1 ;;
forkbomb)
  # Builtins only once it has started: at the limit, nothing more can fork, not even a pipeline.
  n=0
  while [ $n -lt 400 ]; do
    (sleep 4) 2>/dev/null &
    n=$((n + 1))
    echo $n >"$d/out"
  done 2>/dev/null ;;
bigfile)
  dd if=/dev/zero of="$d/big" bs=1M count=64 2>/dev/null
  echo "exit $?" >"$d/out"
  stat -c %s "$d/big" >>"$d/out" ;;
tmpfill)
  dd if=/dev/zero of=/tmp/fill bs=1M count=64 2>/dev/null
  dd if=/dev/zero of=/dev/shm/fill bs=1M count=64 2>/dev/null
  { stat -c %s /tmp/fill; stat -c %s /dev/shm/fill 2>/dev/null || echo 0; } >"$d/out" ;;
openfiles)
  # (sh can only name file descriptors below 10: the count is Node's.)
  "$NODE" -e 'const fs = require("fs"); const fds = []; try { while (fds.length < 500) fds.push(fs.openSync("/dev/null", "r")); } catch {} fs.closeSync(fds.pop()); fs.writeFileSync(process.argv[1], String(fds.length + 1));' "$d/out" ;;
esac
exit 0
`;
fs.writeFileSync(path.join(root, 'attack.sh'), ATTACKS, { mode: 0o755 });

/** Runs one attack as a campaign's `train` would be run, under `limits`; returns its report and the run directory. */
function attack(name: string, limits: Record<string, number> = {}): { out: string; runDir: string; status: number | null } {
  const spec = parseSpec({
    name: 'identity',
    trainer: { command: ['/bin/sh', path.join(root, 'attack.sh')], env: { ATTACK: name, NODE: process.execPath }, limits },
    searchSpace: { lr: { type: 'float', low: 0.001, high: 0.01 } },
  });
  const home = path.join(root, 'home');
  const runDir = path.join(home, 'runs', name);
  fs.mkdirSync(runDir, { recursive: true });
  const cmd = isolatedEntry(trainerSetupOf(spec, home), 'train', ['--run-dir', runDir], { cwd: runDir, data: [], readWrite: [runDir] });
  expect(cmd.sandbox).toBe('bubblewrap');
  const r = spawnSync(cmd.argv[0], cmd.argv.slice(1), { encoding: 'utf8', env: {}, timeout: 60_000 });
  return {
    out: fs.existsSync(path.join(runDir, 'out')) ? fs.readFileSync(path.join(runDir, 'out'), 'utf8') : '',
    runDir,
    status: r.status,
  };
}

const asRoot = process.getuid?.() === 0;

(asRoot ? test : test.skip)('the trainer is an unprivileged host uid, with no capability and no way back to root', () => {
  const { out, runDir } = attack('identity');
  const [uid, ...rest] = out.trim().split('\n');
  expect(Number(uid)).not.toBe(0);
  expect(rest.join('\n')).toMatch(/CapEff:\s+0+\b/);
  expect(rest.join('\n')).toMatch(/NoNewPrivs:\s+1/);
  expect(rest.join('\n')).not.toMatch(/^0$/m); // su did not make it root
  // On the host, what it wrote belongs to that uid, not to root.
  expect(fs.statSync(path.join(runDir, 'out')).uid).not.toBe(0);
});

(asRoot ? test : test.skip)('a fork bomb stops at trainer.limits.processes', () => {
  const { out } = attack('forkbomb', { processes: 48 });
  expect(Number(out.trim())).toBeGreaterThan(10);
  expect(Number(out.trim())).toBeLessThanOrEqual(48);
});

test('a file stops at trainer.limits.diskMb', () => {
  const { out, runDir } = attack('bigfile', { diskMb: 8 });
  expect(out).toMatch(/^exit [1-9]/);
  expect(fs.statSync(path.join(runDir, 'big')).size).toBeLessThanOrEqual(8 * 1024 * 1024);
});

test("the sandbox's /tmp and /dev/shm, which are memory, stop at their size", () => {
  const { out } = attack('tmpfill', { diskMb: 16 });
  const [tmp, shm] = out.trim().split('\n').map(Number);
  expect(tmp).toBeGreaterThan(0);
  expect(tmp).toBeLessThanOrEqual(16 * 1024 * 1024);
  expect(shm).toBeLessThanOrEqual(16 * 1024 * 1024);
});

test('open files stop at trainer.limits.openFiles', () => {
  const { out } = attack('openfiles', { openFiles: 32 });
  expect(Number(out.trim())).toBeGreaterThan(0);
  expect(Number(out.trim())).toBeLessThan(32);
});
