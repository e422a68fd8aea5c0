// The sandbox's bind order for code that lives under a hidden path (the hf-venv under FLYWHEEL_HOME): the hidden
// path is masked, then that folder alone is bound back over the mask, read-only; a folder that holds a hidden path
// is never bound back, so no spec or setting can unmask FLYWHEEL_HOME itself.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bubblewrapArgv } from '../../backends/sandbox/bubblewrap';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'unmasked-'));
const home = path.join(root, 'home');
const venv = path.join(home, 'hf-venv');
fs.mkdirSync(venv, { recursive: true });
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const argv = (unmasked: string[]) =>
  bubblewrapArgv('bwrap', { code: [root], hide: [home], unmasked, data: [], readWrite: [], env: {}, cwd: '/' }, ['/bin/true']);
const binds = (args: string[]) => args.flatMap((a, i) => (a === '--ro-bind' || a === '--tmpfs' ? [`${a} ${args[i + 1]}`] : []));

test('the venv is bound back after the mask of FLYWHEEL_HOME', () => {
  const b = binds(argv([venv]));
  expect(b).toContain(`--tmpfs ${home}`);
  expect(b.indexOf(`--ro-bind ${venv}`)).toBeGreaterThan(b.indexOf(`--tmpfs ${home}`));
});

test('FLYWHEEL_HOME itself, or a folder above it, is never bound back', () => {
  // Binds of the test's folders: the code bind of `root` (before the mask), the mask, and nothing after it.
  const ours = (b: string[]) => b.filter((x) => x.split(' ')[1].startsWith(root));
  for (const p of [home, root]) expect(ours(binds(argv([p])))).toEqual([`--ro-bind ${root}`, `--tmpfs ${home}`]);
});
