// `flywheel setup hf`: installs the Hugging Face trainer's environment (trainers/hf/requirements.txt, pinned) into a
// venv of its own under FLYWHEEL_HOME (stack/hf-env.ts), never into the system Python, and prints one line: where
// it is, or why it could not be made. Run again, it does nothing until a pin changes.
import type { Command } from 'commander';
import { resolveConfig } from '../../core/config';
import { UsageError } from '../../core/errors';
import { hfEnvDir, hfEnvReady, installHfEnv } from '../../stack/hf-env';
import { EXIT_FAILURE } from '../errors';

/** What `flywheel setup` can install, each a function of FLYWHEEL_HOME to its one-line result. */
const TARGETS: Record<string, (home: string, python3?: string) => { line: string; ok: boolean }> = {
  hf: (home, python3) => {
    const dir = hfEnvDir(home);
    if (hfEnvReady(home, {})) return { ok: true, line: `hf-venv ${dir}: already holds trainers/hf/requirements.txt` };
    const r = installHfEnv(home, { python3 });
    return 'problem' in r
      ? { ok: false, line: `hf-venv ${dir}: not installed: ${r.problem}` }
      : { ok: true, line: `hf-venv ${dir}: installed trainers/hf/requirements.txt (interpreter ${r.python})` };
  },
};

export function registerSetup(program: Command): void {
  program
    .command('setup')
    .description(
      "install an optional environment: `hf` is the Hugging Face trainer's (transformers, TRL, peft; pinned) under FLYWHEEL_HOME",
    )
    .argument('<what>', `what to install: ${Object.keys(TARGETS).join(', ')}`)
    .option('--python <python3>', 'the interpreter the venv is made from', 'python3')
    .addHelpText(
      'after',
      '\nExample:\n  $ flywheel setup hf\n  hf-venv /home/me/.flywheel/hf-venv: installed trainers/hf/requirements.txt (interpreter /home/me/.flywheel/hf-venv/bin/python3)\n',
    )
    .action((what: string, opts: { python: string }) => {
      const target = TARGETS[what];
      if (!target) throw new UsageError(`setup: unknown environment "${what}" (known: ${Object.keys(TARGETS).join(', ')})`);
      const { home } = resolveConfig(process.env, process.cwd());
      const r = target(home, opts.python);
      console.log(r.line);
      if (!r.ok) process.exitCode = EXIT_FAILURE;
    });
}
