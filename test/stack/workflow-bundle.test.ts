// The orchestration worker's bundle cache: built once, reused while the sources it contains are unchanged, and
// rebuilt when one of them changes (but not for an edit to a module the bundle does not contain).
import fs from 'node:fs';
import path from 'node:path';
import { scratchDir } from '../helpers/env';
import { bundleKey, cachedWorkflowBundle, importClosure } from '../../workers/workflow-bundle';

it('builds the workflow bundle once and then reuses it', async () => {
  const cacheDir = scratchDir('bundle-cache');
  const built = await cachedWorkflowBundle({ cacheDir });
  const reused = await cachedWorkflowBundle({ cacheDir });
  expect(built.cached).toBe(false);
  expect(reused).toMatchObject({ cached: true, codePath: built.codePath });
  expect(fs.readFileSync(built.codePath, 'utf8')).toContain('__TEMPORAL__');
}, 120_000);

it('keys the bundle on the files the workflows import by value', () => {
  const dir = scratchDir('bundle-key');
  const write = (name: string, text: string): void => fs.writeFileSync(path.join(dir, name), text);
  write('index.ts', "import { a } from './a';\nimport type { B } from './b';\nexport { x } from './lib';\nexport const w = a;\n");
  write('a.ts', 'export const a = 1;\n');
  write('b.ts', 'export type B = number;\n');
  fs.mkdirSync(path.join(dir, 'lib'));
  write('lib/index.ts', 'export const x = 2;\n');
  const entry = path.join(dir, 'index.ts');
  expect([...importClosure(entry)].map((f) => path.relative(dir, f)).sort()).toEqual(['a.ts', 'index.ts', 'lib/index.ts']);

  const before = bundleKey(entry);
  write('b.ts', 'export type B = string;\n');
  expect(bundleKey(entry)).toBe(before);
  write('a.ts', 'export const a = 3;\n');
  expect(bundleKey(entry)).not.toBe(before);
});
