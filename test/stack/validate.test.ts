// `flywheel validate`: "ok" for a good spec (YAML or JSON), one `path: message` line per problem and exit 2 for a
// bad one, a one-line error with the line number for unparsable YAML; never a stack trace.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { scratchDir } from '../helpers/env';

const BIN = path.resolve(__dirname, '../../bin/flywheel.js');
const dir = scratchDir('validate');

function validate(name: string, content?: string, extra: string[] = []): { code: number | null; stdout: string; stderr: string } {
  const file = path.join(dir, name);
  if (content !== undefined) fs.writeFileSync(file, content);
  const r = spawnSync(process.execPath, [BIN, 'validate', ...(name ? [file] : []), ...extra], { encoding: 'utf8', env: { ...process.env, FLYWHEEL_DEBUG: '' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const good = 'name: demo\nsearchSpace:\n  lr: { type: float, low: 0.0001, high: 0.1, log: true }\n';

it('prints ok for a valid YAML or JSON spec', () => {
  expect(validate('good.yaml', good)).toMatchObject({ code: 0, stdout: 'ok\n' });
  const json = JSON.stringify({ name: 'demo', searchSpace: { layers: { type: 'int', low: 1, high: 4 } } });
  expect(validate('good.json', json)).toMatchObject({ code: 0, stdout: 'ok\n' });
});

it('rejects an invalid spec with one line per problem, each with its path, and exit code 2', () => {
  const bad = [
    'name: Not A Name',
    'searchSpace:',
    '  lr: { type: float, low: 1, high: 0.1 }',
    'innerLoop:',
    '  budget:',
    '    experiments: 0',
    '  proposer: genius',
  ].join('\n');
  const r = validate('bad.yaml', bad);
  expect(r.code).toBe(2);
  const lines = r.stdout.trim().split('\n');
  expect(lines).toHaveLength(4);
  expect(lines).toEqual(
    expect.arrayContaining([
      'name: must be lowercase letters, digits and dashes',
      'searchSpace.lr.high: high must be at least low',
      'innerLoop.budget.experiments: must be at least 1',
      expect.stringMatching(/^innerLoop\.proposer: /),
    ]),
  );
});

it('reports unparsable YAML, a missing file and a missing argument in one line, exit code 2', () => {
  const broken = validate('broken.yaml', 'name: demo\nsearchSpace: [\n');
  expect(broken.code).toBe(2);
  expect(broken.stderr).toMatch(/^flywheel: .*broken\.yaml:\d+:\d+: cannot parse: .+\n$/);
  const missing = validate('missing.yaml');
  expect(missing).toMatchObject({ code: 2, stderr: expect.stringMatching(/^flywheel: .*missing\.yaml: cannot read: no such file\n$/) });
  const noArg = validate('');
  expect(noArg.code).toBe(2);
  expect(noArg.stderr).toMatch(/missing required argument 'spec'/);
  for (const r of [broken, missing, noArg]) expect(r.stderr).not.toMatch(/\n\s+at /);
});
