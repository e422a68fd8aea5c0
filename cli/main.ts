// The `flywheel` command (loaded by bin/flywheel.js): a commander program with one file per subcommand.
// The commands themselves are listed in cli/program.ts.
import { EXIT_USAGE, exitCodeFor, reportError } from './errors';
import { buildProgram } from './program';

async function main(argv: string[]): Promise<number> {
  try {
    if (argv.length <= 2) {
      buildProgram().outputHelp();
      return EXIT_USAGE;
    }
    await buildProgram(argv[2]).parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    reportError(err);
    return exitCodeFor(err);
  }
}

// `flywheel … | head` closes stdout early: that is not an error worth a stack trace.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});

void main(process.argv).then((code) => {
  process.exitCode = code;
  // Give stdout and open handles a moment to close, but never hang on one that does not.
  setTimeout(() => process.exit(code), 2_000).unref();
});
