// `flywheel validate spec.yaml`: checks a campaign spec without touching any server; exit 2 when invalid.
import type { Command } from 'commander';
import { InvalidSpecError } from '../../core/spec';
import { EXIT_USAGE } from '../errors';
import { loadSpecFile } from '../spec-file';

export function registerValidate(program: Command): void {
  program
    .command('validate')
    .description('check a campaign spec (YAML or JSON): prints "ok" or one line per problem, with its path')
    .argument('<spec>', 'the spec file')
    .addHelpText('after', '\nExample:\n  $ flywheel validate examples/code-completion.yaml\n  innerLoop.budget.experiments: must be at least 1\n')
    .action((file: string) => {
      try {
        loadSpecFile(file);
        console.log('ok');
      } catch (e) {
        if (!(e instanceof InvalidSpecError)) throw e;
        for (const p of e.problems) console.log(p);
        process.exitCode = EXIT_USAGE;
      }
    });
}
