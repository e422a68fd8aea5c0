// Real patches to the reference PyTorch trainer's train.py (trainers/torch), for the code-experiment tests: each a
// unified diff made by `diff -u` from the file as shipped and an edited copy, so it applies as git apply reads it.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { torchSpec } from './specs';
import { torchPython } from './torch-python';

export const TORCH_DIR = path.join(__dirname, '..', '..', 'trainers', 'torch');

/** The unified diff turning `text` into `edit(text)` for `file` (paths a/<file>, b/<file>). */
export function patchOf(file: string, text: string, edit: (s: string) => string): string {
  const after = edit(text);
  if (after === text) throw new Error(`the edit of ${file} changes nothing`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'patch-'));
  try {
    fs.writeFileSync(path.join(dir, 'old'), text);
    fs.writeFileSync(path.join(dir, 'new'), after);
    const r = spawnSync('diff', ['-u', '--label', `a/${file}`, '--label', `b/${file}`, 'old', 'new'], { cwd: dir, encoding: 'utf8' });
    if (r.status !== 1) throw new Error(`diff failed: ${r.stderr}`);
    return r.stdout;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A copy of trainers/torch in a fresh folder: the recipe a campaign imports (mutable: train.py). */
export function torchRecipeFolder(scratch: string): string {
  const dir = path.join(scratch, 'torch-recipe');
  fs.mkdirSync(dir, { recursive: true });
  for (const f of fs.readdirSync(TORCH_DIR)) if (f.endsWith('.py')) fs.copyFileSync(path.join(TORCH_DIR, f), path.join(dir, f));
  return dir;
}

const replace = (from: string, to: string) => (s: string) => {
  if (!s.includes(from)) throw new Error(`not in the file: ${from}`);
  return s.replace(from, to);
};

/** The patches the scripted model sends, against train.py as shipped. */
export function torchPatches(): Record<'helps' | 'hurts' | 'misfit' | 'outside' | 'escape', string> {
  const train = fs.readFileSync(path.join(TORCH_DIR, 'train.py'), 'utf8');
  const model = fs.readFileSync(path.join(TORCH_DIR, 'model.py'), 'utf8');
  return {
    // More optimizer steps per run with a linear warm-up over the first tenth: a better model for the same knobs.
    helps: patchOf(
      'train.py',
      train,
      replace(
        "    p = resolve_params(run['params'])\n",
        "    p = resolve_params(run['params'])\n    # patch: four times the steps, with a linear learning-rate warm-up over the first tenth\n    p['steps'] = p['steps'] * 4\n    p['lrWarmup'] = max(p['lrWarmup'], p['steps'] // 10)\n",
      ),
    ),
    // A learning rate a hundred times smaller: the model barely moves.
    hurts: patchOf(
      'train.py',
      train,
      replace(
        '            lr = learning_rate(p, t)\n',
        '            lr = learning_rate(p, t) * 0.01  # patch: a much gentler learning rate\n',
      ),
    ),
    // Written against a train.py that never was: its context lines are not in the file.
    misfit: [
      '--- a/train.py',
      '+++ b/train.py',
      '@@ -10,3 +10,3 @@',
      ' import nonexistent_module_for_context',
      '-LEARNING_RATE = 0.1',
      '+LEARNING_RATE = 0.2',
      ' import another_missing_line',
      '',
    ].join('\n'),
    // model.py is not in trainer.recipe.mutable.
    outside: patchOf('model.py', model, (s) => `${s}\n# patch: a wider default model\nDEFAULT_WIDTH = 256\n`),
    // Tries to read outside its sandbox (FLYWHEEL_HOME's files, /etc/shadow, PostgreSQL's port), writing what it got
    // where the eval could see it; in the sandbox it reads nothing.
    escape: patchOf(
      'train.py',
      train,
      replace(
        "    seed = run['seed']\n",
        [
          "    seed = run['seed']",
          '    # patch: look around first',
          '    import json, socket',
          '    stolen = {}',
          "    for f in ['/etc/shadow', os.path.join(os.environ.get('FLYWHEEL_HOME', '/nonexistent'), 'config.json'), os.path.expanduser('~/.pgpass')]:",
          '        try:',
          "            with open(f, encoding='utf-8', errors='replace') as h:",
          '                stolen[f] = h.read()[:200]',
          '        except OSError:',
          '            stolen[f] = None',
          '    try:',
          "        socket.create_connection(('127.0.0.1', 5432), timeout=2).close()",
          "        stolen['postgres'] = 'connected'",
          '    except OSError:',
          "        stolen['postgres'] = None",
          "    with open(os.path.join(run_dir, 'stolen.json'), 'w', encoding='utf-8') as h:",
          '        json.dump(stolen, h)',
          '    if not any(stolen.values()):',
          "        raise TrainerError('escape: read nothing outside the sandbox')",
          '',
        ].join('\n'),
      ),
    ),
  };
}

/**
 * A campaign on the torch trainer whose code is a recipe: `folder` imported, train.py mutable, `{recipe}/main.py` the
 * command (the commit an experiment runs, bound read-only in the sandbox). `fixed` adds to (or overrides) the
 * trainer's fixed knobs.
 */
export function torchRecipeSpec(
  name: string,
  folder: string,
  opts: {
    steps: number;
    lr: number;
    confirmSeeds?: number;
    fixed?: Record<string, unknown>;
    innerLoop?: Record<string, unknown>;
    over?: Record<string, unknown>;
  },
): Record<string, unknown> {
  const base = torchSpec(name, [opts.lr], opts.steps, opts.innerLoop ?? {}) as unknown as Record<string, unknown> & {
    trainer: Record<string, unknown>;
  };
  const { readOnlyPaths: _, ...trainer } = base.trainer;
  return {
    ...base,
    trainer: {
      ...trainer,
      fixed: { ...(trainer.fixed as Record<string, unknown>), ...opts.fixed },
      command: [torchPython(), '{recipe}/main.py'],
      recipe: { path: folder, mutable: ['train.py'], confirmSeeds: opts.confirmSeeds ?? 0 },
    },
    ...opts.over,
  };
}
