// `flywheel setup hf`: installs the Hugging Face trainer's environment (trainers/hf/requirements.txt, pinned) into a
// venv of its own under FLYWHEEL_HOME (stack/hf-env.ts), never into the system Python, then builds the base model
// `flywheel-base` with it (stack/hf-base-model.ts: pretrained here, a few minutes on 2 cores), and prints one line
// for each: where it is, or why it could not be made. Run again, it does nothing until a pin or the pretraining changes.
import path from 'node:path';
import type { Command } from 'commander';
import { resolveConfig } from '../../core/config';
import { UsageError } from '../../core/errors';
import { hfEnvDir, hfEnvReady, installHfEnv } from '../../stack/hf-env';
import { buildHfBaseModel, formatBaseModel } from '../../stack/hf-base-model';
import { hfModelsDir } from '../../core/trainer-program';
import { EXIT_FAILURE } from '../errors';

/** What `flywheel setup` can install, each a function of FLYWHEEL_HOME to its one-line results (printed as each is done). */
const TARGETS: Record<string, (home: string, python3: string | undefined, say: (line: string) => void) => boolean> = {
  hf: (home, python3, say) => {
    const dir = hfEnvDir(home);
    const python = path.join(dir, 'bin', 'python3');
    if (hfEnvReady(home, {})) say(`hf-venv ${dir}: already holds trainers/hf/requirements.txt`);
    else {
      const r = installHfEnv(home, { python3 });
      if ('problem' in r) {
        say(`hf-venv ${dir}: not installed: ${r.problem}`);
        return false;
      }
      say(`hf-venv ${dir}: installed trainers/hf/requirements.txt (interpreter ${r.python})`);
    }
    // Built with the venv's own interpreter (its standard library is the corpus), whatever FLYWHEEL_HF_PYTHON says.
    const base = buildHfBaseModel(home, { python });
    say('problem' in base ? `flywheel-base ${hfModelsDir(home)}: not built: ${base.problem}` : formatBaseModel(base));
    return !('problem' in base);
  },
};

export function registerSetup(program: Command): void {
  program
    .command('setup')
    .description(
      "install an optional environment: `hf` is the Hugging Face trainer's (transformers, TRL, peft; pinned) under FLYWHEEL_HOME, " +
        'and its base model flywheel-base, pretrained here on the Python standard library (a few minutes, once)',
    )
    .argument('<what>', `what to install: ${Object.keys(TARGETS).join(', ')}`)
    .option('--python <python3>', 'the interpreter the venv is made from', 'python3')
    .addHelpText(
      'after',
      '\nExample:\n  $ flywheel setup hf\n  hf-venv /home/me/.flywheel/hf-venv: installed trainers/hf/requirements.txt (interpreter /home/me/.flywheel/hf-venv/bin/python3)\n' +
        '  flywheel-base /home/me/.flywheel/models/flywheel-base-<key>: built, 2.2M parameters, pretrained 400 steps in 240 s on the Python standard library (…), held-out loss … nats/token\n',
    )
    .action((what: string, opts: { python: string }) => {
      const target = TARGETS[what];
      if (!target) throw new UsageError(`setup: unknown environment "${what}" (known: ${Object.keys(TARGETS).join(', ')})`);
      const { home } = resolveConfig(process.env, process.cwd());
      if (!target(home, opts.python, (line) => console.log(line))) process.exitCode = EXIT_FAILURE;
    });
}
