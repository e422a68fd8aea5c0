// `flywheel validate spec.yaml`: checks a campaign spec without touching any server; exit 2 when invalid. A trainer
// of one's own is also checked on this host, as the training worker checks it before a loop writes anything: its
// program must resolve on PATH, its script exist and its sandbox be possible. With --worker-elsewhere (the training
// worker runs on another host) what this host finds is a warning; Ray and Kubernetes run the trainer in the cluster's
// container, where nothing is checked, and say so.
import type { Command } from 'commander';
import { SANDBOXED_BACKENDS, trainerStart } from '../../backends/sandbox/trainer-start';
import { InvalidSpecError, type CampaignSpec } from '../../core/spec';
import { trainerEnvironment } from '../../core/trainer-environment';
import { EXIT_USAGE } from '../errors';
import { loadSpecFile } from '../spec-file';

export function registerValidate(program: Command): void {
  program
    .command('validate')
    .description(
      'check a campaign spec (YAML or JSON) and that its trainer can start here: prints "ok" or one line per problem, with its path',
    )
    .argument('<spec>', 'the spec file')
    .option(
      '--worker-elsewhere',
      'the training worker runs on another host: what this host finds about the trainer is a warning, not a problem',
    )
    .addHelpText(
      'after',
      '\nExample:\n  $ flywheel validate examples/code-completion.yaml\n  innerLoop.budget.experiments: must be at least 1\n',
    )
    .action((file: string, opts: { workerElsewhere?: boolean }) => {
      let spec: CampaignSpec;
      try {
        spec = loadSpecFile(file);
      } catch (e) {
        if (!(e instanceof InvalidSpecError)) throw e;
        for (const p of e.problems) console.log(p);
        process.exitCode = EXIT_USAGE;
        return;
      }
      const finding = trainerFinding(spec);
      if (finding?.here && !opts.workerElsewhere) {
        console.log(`trainer.command: ${finding.text} (on this host; if the training worker runs on another, pass --worker-elsewhere)`);
        process.exitCode = EXIT_USAGE;
        return;
      }
      if (finding)
        console.log(
          `warning: trainer.command: ${finding.text}${finding.here ? ' (on this host; the training worker checks on its own before a loop writes anything)' : ''}`,
        );
      console.log('ok');
    });
}

/** What this host can tell about the spec's own trainer: a problem found here, or a note that it cannot look. */
function trainerFinding(spec: CampaignSpec): { text: string; here: boolean } | undefined {
  const { trainer, backend } = spec;
  if (trainer.command === 'builtin') return undefined;
  if (!SANDBOXED_BACKENDS.has(backend.kind))
    return { text: `not checked: backend.kind ${backend.kind} runs the trainer in the cluster's container`, here: false };
  const start = trainerStart({
    argv: [...trainer.command, 'train'],
    env: trainerEnvironment(process.env, trainer),
    cwd: process.cwd(),
    code: trainer.readOnlyPaths,
    data: [],
    readWrite: [],
    hide: [],
    network: trainer.network,
    unsandboxed: trainer.unsandboxed,
  });
  return start.ok ? undefined : { text: start.problem, here: true };
}
