// The `flywheel` command (loaded by bin/flywheel.js): a commander program with one file per subcommand.
// To add a command, write cli/commands/<name>.ts exporting register<Name>(program) and list it below.
import { Command } from 'commander';
import { EXIT_USAGE, exitCodeFor, reportError } from './errors';
import { registerUp } from './commands/up';
import { registerValidate } from './commands/validate';
import { registerWorker } from './commands/worker';
import { registerRun } from './commands/run';
import { registerStatus } from './commands/status';
import { registerControl } from './commands/control';
import { registerDemo } from './commands/demo';

const COMMANDS: Array<(program: Command) => void> = [
  registerUp,
  registerWorker,
  registerValidate,
  registerRun,
  registerStatus,
  registerControl,
  registerDemo,
];

export function buildProgram(): Command {
  const program = new Command('flywheel')
    .description('Durable model-improvement loops on Temporal')
    .version((require('../package.json') as { version: string }).version)
    // Subcommands created with .command() inherit these: usage errors throw (exit 2) instead of exiting 1.
    .exitOverride()
    .showHelpAfterError('(add --help for usage)');
  for (const register of COMMANDS) register(program);
  return program;
}

async function main(argv: string[]): Promise<number> {
  try {
    if (argv.length <= 2) {
      buildProgram().outputHelp();
      return EXIT_USAGE;
    }
    await buildProgram().parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    reportError(err);
    return exitCodeFor(err);
  }
}

main(process.argv).then((code) => {
  process.exitCode = code;
  // Give stdout and open handles a moment to close, but never hang on one that does not.
  setTimeout(() => process.exit(code), 2_000).unref();
});
