// `flywheel validate`: "ok" for a good spec (YAML or JSON), one `path: message` line per problem and exit 2 for a
// bad one, a one-line error with the line number for unparsable YAML; never a stack trace.
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { scratchDir } from '../helpers/env';
import { sandboxAvailable } from '../helpers/sandbox';

const BIN = path.resolve(__dirname, '../../bin/flywheel.js');
const dir = scratchDir('validate');

function validate(
  name: string,
  content?: string,
  extra: string[] = [],
  env: NodeJS.ProcessEnv = {},
): { code: number | null; stdout: string; stderr: string } {
  const file = path.join(dir, name);
  if (content !== undefined) fs.writeFileSync(file, content);
  const r = spawnSync(process.execPath, [BIN, 'validate', ...(name ? [file] : []), ...extra], {
    encoding: 'utf8',
    env: { ...process.env, FLYWHEEL_DEBUG: '', ...env },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const good = 'name: demo\nsearchSpace:\n  lr: { type: float, low: 0.0001, high: 0.1, log: true }\n';

it('prints ok for a valid YAML or JSON spec', () => {
  expect(validate('good.yaml', good)).toMatchObject({ code: 0, stdout: 'ok\n' });
  const json = JSON.stringify({ name: 'demo', searchSpace: { hidden: { type: 'int', low: 16, high: 64 } } });
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

it('refuses a knob the trainer does not have, naming the nearest one, before anything is registered', () => {
  const typo = `${good}  hiden: { type: int, low: 16, high: 64 }\ntrainer:\n  fixed: { stpes: 10 }\n`;
  const r = validate('typo.yaml', typo);
  expect(r.code).toBe(2);
  const knobs = 'its knobs: context, embed, hidden, lr, steps, batchSize, weightDecay, lrWarmup, lrSchedule, logEvery';
  expect(r.stdout.trim().split('\n')).toEqual([
    `trainer.fixed.stpes: "stpes" is not a knob of the built-in trainer (did you mean "steps"? ${knobs})`,
    `searchSpace.hiden: "hiden" is not a knob of the built-in trainer (did you mean "hidden"? ${knobs})`,
  ]);
});

it("refuses a parallelism past Temporal's pending-children limit in one line, exit code 2", () => {
  const r = validate('wide.yaml', `${good}innerLoop:\n  budget:\n    parallelism: 2000\n`);
  expect(r.code).toBe(2);
  expect(r.stdout.trim().split('\n')).toEqual([
    "innerLoop.budget.parallelism: must be at most 1999 (Temporal's 2,000 pending child workflows per loop, less the baseline)",
  ]);
  expect(validate('wide-ok.yaml', `${good}innerLoop:\n  budget:\n    experiments: 1999\n    parallelism: 1999\n`)).toMatchObject({
    code: 0,
    stdout: 'ok\n',
  });
});

it("refuses a batch of inline experiments past what the loop's one history holds, in one line, exit code 2", () => {
  const inline = (batch: number) => `${good}innerLoop:\n  experimentWorkflows: inline\n  batchSize: ${batch}\n`;
  const r = validate('inline-wide.yaml', inline(1319));
  expect(r.code).toBe(2);
  expect(r.stdout.trim().split('\n')).toEqual([
    "innerLoop.batchSize: must be at most 1318 with experimentWorkflows inline and maxTrainingAttempts 2 (a batch's experiments write to the loop's one history, which Temporal ends at 51,200 events)",
  ]);
  expect(validate('inline-ok.yaml', inline(1318))).toMatchObject({ code: 0, stdout: 'ok\n' });
});

it('refuses warm trainers where a run cannot be served, in one line each, exit code 2', () => {
  const warm = (extra: string) => `${good}trainer:\n  warmTrain: true\n${extra}`;
  const refused = [
    [warm('backend:\n  kind: slurm\n'), 'trainer.warmTrain: only the local backend keeps warm trainers (backend.kind is slurm)'],
    [
      warm('  command: hf\n'),
      'trainer.warmTrain: the hf trainer does not speak `train --serve` (the built-in trainer and a command of your own may)',
    ],
  ];
  for (const [i, [spec, line]] of refused.entries()) {
    const r = validate(`warm-${i}.yaml`, spec);
    expect(r.code).toBe(2);
    expect(r.stdout.trim().split('\n')).toEqual([line]);
  }
  expect(validate('warm-ok.yaml', warm(''))).toMatchObject({ code: 0, stdout: 'ok\n' });
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

describe("a trainer of one's own is checked on this host, as the training worker checks it", () => {
  const spec = (trainer: string, backend = 'local') =>
    `name: demo\ntrainer:\n  command: ${trainer}\n  unsandboxed: true\nbackend: { kind: ${backend} }\nsearchSpace:\n  lr: { type: float, low: 0.0001, high: 0.1, log: true }\n`;

  it('refuses a program not on PATH, or a warning with --worker-elsewhere', () => {
    const missing = validate('missing-program.yaml', spec('[flywheel-no-such-trainer, --x]'));
    expect(missing).toMatchObject({
      code: 2,
      stdout:
        'trainer.command: trainer program "flywheel-no-such-trainer" was not found on PATH (on this host; if the training worker runs on another, pass --worker-elsewhere)\n',
    });
    const elsewhere = validate('missing-program.yaml', undefined, ['--worker-elsewhere']);
    expect(elsewhere.code).toBe(0);
    expect(elsewhere.stdout.split('\n')).toEqual([
      'warning: trainer.command: trainer program "flywheel-no-such-trainer" was not found on PATH (on this host; the training worker checks on its own before a loop writes anything)',
      'ok',
      '',
    ]);
  });

  it("refuses an interpreter's script given by a relative path (the trainer starts in its run directory) or not there", () => {
    expect(validate('relative-script.yaml', spec('[python3, train.py]'))).toMatchObject({
      code: 2,
      stdout: expect.stringMatching(
        /^trainer\.command: trainer script "train\.py" is a relative path, but the trainer starts in its run directory/,
      ),
    });
    expect(validate('no-script.yaml', spec(`[${process.execPath}, ${path.join(dir, 'nowhere.js')}]`))).toMatchObject({
      code: 2,
      stdout: expect.stringMatching(/^trainer\.command: trainer script ".*nowhere\.js" was not found/),
    });
    expect(validate('script.yaml', spec(`[${process.execPath}, ${BIN}]`))).toMatchObject({ code: 0, stdout: 'ok\n' });
  });

  it('refuses a trainer that needs a sandbox this host cannot make, unless the spec runs it unsandboxed', () => {
    const sandboxed = spec(`[${process.execPath}, ${BIN}]`).replace('  unsandboxed: true\n', '');
    const noSandbox = { FLYWHEEL_BWRAP: '/bin/false' };
    expect(validate('sandboxed.yaml', sandboxed, [], noSandbox)).toMatchObject({
      code: 2,
      stdout: expect.stringMatching(/^trainer\.command: no sandbox for the trainer on this host: .*set trainer\.unsandboxed: true/),
    });
    expect(validate('unsandboxed.yaml', spec(`[${process.execPath}, ${BIN}]`), [], noSandbox)).toMatchObject({ code: 0, stdout: 'ok\n' });
  });

  it('says that a trainer in a Ray or Kubernetes container is not checked', () => {
    expect(validate('ray.yaml', spec('[flywheel-no-such-trainer]', 'ray'))).toMatchObject({
      code: 0,
      stdout: "warning: trainer.command: not checked: backend.kind ray runs the trainer in the cluster's container\nok\n",
    });
  });
});

describe('trainer.command: hf, resolved on this host into the hf-venv interpreter and trainers/hf/main.py', () => {
  const spec = (command: string, extra = '') =>
    `name: demo\ntrainer:\n  command: ${command}\n  unsandboxed: true\nsearchSpace:\n  lr: { type: float, low: 0.0001, high: 0.1, log: true }\n${extra}`;
  const HF_MAIN = path.resolve(__dirname, '../../trainers/hf/main.py');

  it('says in one line that the venv is missing and how to make it', () => {
    const home = path.join(dir, 'no-venv-home');
    const r = validate('hf-no-venv.yaml', spec('hf'), [], { FLYWHEEL_HOME: home, FLYWHEEL_HF_PYTHON: '' });
    expect(r).toMatchObject({ code: 2, stderr: '' });
    expect(r.stdout).toBe(
      `trainer.command: trainer program "${path.join(home, 'hf-venv', 'bin', 'python3')}" was not found: run flywheel setup hf (or set FLYWHEEL_HF_PYTHON) (on this host; if the training worker runs on another, pass --worker-elsewhere)\n`,
    );
  });

  it('passes where the interpreter is there, and accepts bits_per_byte, which Flywheel scores for its checkpoints', () => {
    // Any Python stands in for the venv's: validate resolves the program and the script, and runs neither.
    const env = {
      FLYWHEEL_HF_PYTHON: spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).stdout.trim(),
    };
    expect(fs.existsSync(HF_MAIN)).toBe(true);
    expect(validate('hf.yaml', spec('hf', 'selection: { metric: bits_per_byte }\n'), [], env)).toMatchObject({ code: 0, stdout: 'ok\n' });
  });

  it('refuses bits_per_byte, as selection and as gate metric, for the reference PyTorch trainer, whose checkpoints Flywheel cannot score', () => {
    const torch = `[python3, ${path.resolve(__dirname, '../../trainers/torch/main.py')}]`;
    const r = validate('torch-bpb.yaml', spec(torch));
    expect(r.code).toBe(2);
    expect(r.stdout.trim().split('\n')).toEqual([
      'selection.metric: "bits_per_byte" needs a checkpoint format Flywheel scores itself (trainer.command builtin or hf); this trainer\'s are not one',
    ]);
    const gate = validate('torch-gate.yaml', spec(torch, 'selection: { metric: exact_match }\n'));
    expect(gate.stdout).toMatch(/^outerLoop\.promotion\.metric: "bits_per_byte" needs a checkpoint format Flywheel scores itself/);
    expect(
      validate('torch-ok.yaml', spec(torch, 'selection: { metric: exact_match }\nouterLoop: { promotion: { metric: exact_match } }\n')),
    ).toMatchObject({ code: 0, stdout: 'ok\n' });
  });

  it("asks a trainer of one's own for its knobs through its describe entry point, and says when it cannot", () => {
    const torch = `[python3, ${path.resolve(__dirname, '../../trainers/torch/main.py')}]`;
    const exact = 'selection: { metric: exact_match }\nouterLoop: { promotion: { metric: exact_match } }\n';
    const typo = spec(torch, exact).replace('  lr: {', '  n_layr: { type: int, low: 1, high: 4 }\n  lr: {');
    const r = validate('torch-typo.yaml', typo);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(
      /^searchSpace\.n_layr: "n_layr" is not a knob of the trainer \(python3 main\.py\) \(did you mean "n_layer"\? its knobs: n_layer, /,
    );
    // The flywheel CLI as a "trainer" has no describe entry point: not checked, said on stderr, and still ok.
    const none = validate('no-describe.yaml', spec(`[${process.execPath}, ${BIN}]`));
    expect(none).toMatchObject({ code: 0, stdout: 'ok\n' });
    expect(none.stderr).toMatch(/^note: trainer knobs not checked: it has no describe entry point \(exit \d/);
  });
});

describe('trainer.command: hf: the model and tokenizer must be loadable from what the spec names (issue 34)', () => {
  const python = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).stdout.trim();
  const hfSpec = (model: string, trainer = '  unsandboxed: true\n') =>
    `name: demo\ntrainer:\n  command: hf\n${trainer}  fixed: { model: ${JSON.stringify(model)} }\nsearchSpace:\n  lr: { type: float, low: 0.0001, high: 0.1, log: true }\n`;
  /** validate, not blocking this process: the test's own hub answers meanwhile. */
  const validateAsync = (name: string, content: string, env: NodeJS.ProcessEnv) =>
    new Promise<{ code: number; stdout: string }>((resolve) => {
      const file = path.join(dir, name);
      fs.writeFileSync(file, content);
      execFile(
        process.execPath,
        [BIN, 'validate', file],
        { encoding: 'utf8', env: { ...process.env, FLYWHEEL_DEBUG: '', ...env } },
        (e, stdout) => resolve({ code: e ? Number(e.code) : 0, stdout }),
      );
    });

  (sandboxAvailable ? it : it.skip)('refuses a hub id when the sandboxed trainer has no network, in one line', () => {
    const r = validate('hf-hub-offline.yaml', hfSpec('Qwen/Qwen2.5-0.5B-Instruct', ''), [], { FLYWHEEL_HF_PYTHON: python });
    expect(r).toMatchObject({ code: 2, stderr: '' });
    expect(r.stdout).toBe(
      'params.model Qwen/Qwen2.5-0.5B-Instruct: a hub id, but the trainer has no network (trainer.network: false); give a local folder\n',
    );
  });

  it('refuses a local folder that is missing, or that Flywheel would not load (code in it), naming it', () => {
    const missing = path.join(dir, 'no-such-model');
    const r = validate('hf-missing.yaml', hfSpec(missing), [], { FLYWHEEL_HF_PYTHON: python });
    expect(r).toMatchObject({ code: 2, stdout: `params.model ${missing}: no such folder on this host\n` });
    const coded = path.join(dir, 'coded-model');
    fs.mkdirSync(coded, { recursive: true });
    for (const f of ['config.json', 'tokenizer.json']) fs.writeFileSync(path.join(coded, f), '{}');
    fs.writeFileSync(path.join(coded, 'model.safetensors'), '');
    fs.writeFileSync(path.join(coded, 'modeling_evil.py'), 'import os\n');
    const c = validate('hf-coded.yaml', hfSpec(coded), [], { FLYWHEEL_HF_PYTHON: python });
    expect(c).toMatchObject({ code: 2, stdout: `params.model: ${coded}: holds code (modeling_evil.py); trust_remote_code is refused\n` });
    fs.rmSync(path.join(coded, 'modeling_evil.py'));
    expect(validate('hf-folder-ok.yaml', hfSpec(coded), [], { FLYWHEEL_HF_PYTHON: python })).toMatchObject({ code: 0, stdout: 'ok\n' });
    // flywheel-base is this host's own base model: refused where `flywheel setup hf` has not built it.
    const noBase = validate('hf-no-base.yaml', hfSpec('flywheel-base'), [], {
      FLYWHEEL_HF_PYTHON: python,
      FLYWHEEL_HOME: path.join(dir, 'no-base-home'),
    });
    expect(noBase).toMatchObject({
      code: 2,
      stdout: 'params.model flywheel-base: no base model has been built on this host: run flywheel setup hf\n',
    });
    // With --worker-elsewhere a folder missing here is a warning: the worker's host may have it.
    expect(validate('hf-missing.yaml', undefined, ['--worker-elsewhere'], { FLYWHEEL_HF_PYTHON: python })).toMatchObject({
      code: 0,
      stdout: `warning: params.model ${missing}: no such folder on this host (on this host)\nok\n`,
    });
  });

  it('with the network on, asks the hub (HF_ENDPOINT, a local server here) for a hub id and says when it cannot answer', async () => {
    const hub = http.createServer((req, res) => res.writeHead(req.url === '/api/models/org/known' ? 200 : 404).end('{}'));
    await new Promise<void>((r) => hub.listen(0, '127.0.0.1', r));
    const endpoint = `http://127.0.0.1:${(hub.address() as AddressInfo).port}`;
    const trainer = `  network: true\n  unsandboxed: ${!sandboxAvailable}\n  env: { HF_ENDPOINT: "${endpoint}" }\n`;
    try {
      const env = { FLYWHEEL_HF_PYTHON: python };
      expect(await validateAsync('hf-hub-ok.yaml', hfSpec('org/known', trainer), env)).toEqual({ code: 0, stdout: 'ok\n' });
      expect(await validateAsync('hf-hub-404.yaml', hfSpec('org/unknown', trainer), env)).toEqual({
        code: 2,
        stdout: `params.model org/unknown: the hub ${endpoint} has no such model, or it is private or gated (HTTP 404; pass a token with trainer.passEnv: [HF_TOKEN])\n`,
      });
    } finally {
      await new Promise((r) => hub.close(r));
    }
    const closed = await validateAsync('hf-hub-down.yaml', hfSpec('org/known', trainer), { FLYWHEEL_HF_PYTHON: python });
    expect(closed.code).toBe(2);
    expect(closed.stdout).toBe(
      `params.model org/known: a hub id, but the hub ${endpoint} is not reachable from this host (ECONNREFUSED); give a local folder\n`,
    );
  });
});
