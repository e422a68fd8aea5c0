// `flywheel validate spec.yaml`: checks a campaign spec without touching any server; exit 2 when invalid. The paths
// the spec shows its trainer are checked against what the sandbox hides (FLYWHEEL_HOME, /tmp, PostgreSQL's sockets,
// Flywheel's scratch, and every registered suite's file when a stack answers). A trainer
// of one's own is also checked on this host, as the training worker checks it before a loop writes anything: its
// program must resolve on PATH, its script exist and its sandbox be possible. With --worker-elsewhere (the training
// worker runs on another host) what this host finds is a warning; Ray and Kubernetes run the trainer in the cluster's
// container, where nothing is checked, and say so. An `hf` trainer's `model` and `tokenizer` must be loadable
// (backends/hf-model-check.ts): a local folder that exists, that its sandbox shows and that passes the frozen-folder
// checks, or a hub id with `trainer.network: true` and the hub answering. The metric names (`selection.metric`, the
// gate's `metric`) must be ones the task's suite reports: the built-in task's are known here; a custom task's dataset
// and suite are looked up in the database (unknown ones are problems too), and a wrong name is refused with the valid
// ones listed.
import type { Command } from 'commander';
import { hfSourceProblems } from '../../backends/hf-model-check';
import { exposedPathProblems, exposedPaths } from '../../backends/sandbox/exposed-paths';
import { SANDBOXED_BACKENDS, trainerStart } from '../../backends/sandbox/trainer-start';
import { resolveConfig } from '../../core/config';
import { UsageError } from '../../core/errors';
import { InvalidSpecError, type CampaignSpec } from '../../core/spec';
import { trainerEnvironment } from '../../core/trainer-environment';
import { trainerArgv } from '../../backends/trainer-programs';
import { HF_SETUP_HINT } from '../../core/trainer-program';
import { checkKnobs, type KnobCheck } from '../knob-check';
import { pinTask } from '../../services/campaigns/pin-task';
import { predictScratchRoot } from '../../services/paths';
import { registeredSuiteSources } from '../../services/suites/suite-sources';
import { reportedMetrics, unreportedMetrics } from '../../services/suites/spec-metrics';
import { NoStackError } from '../../stack/endpoints';
import { EXIT_USAGE } from '../errors';
import { loadSpecFile } from '../spec-file';
import { withDb } from '../with-db';

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
    .action(async (file: string, opts: { workerElsewhere?: boolean }) => {
      let spec: CampaignSpec;
      try {
        spec = loadSpecFile(file);
      } catch (e) {
        if (!(e instanceof InvalidSpecError)) throw e;
        for (const p of e.problems) console.log(p);
        process.exitCode = EXIT_USAGE;
        return;
      }
      const metricProblems = await taskProblems(spec);
      if (metricProblems.length > 0) {
        for (const p of metricProblems) console.log(p);
        process.exitCode = EXIT_USAGE;
        return;
      }
      const exposure = await exposureProblems(spec);
      if (exposure.length > 0) {
        for (const p of exposure) console.log(p);
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
      if (!finding && SANDBOXED_BACKENDS.has(spec.backend.kind)) {
        const sources = await hfSourceProblems(spec, resolveConfig(process.env, process.cwd()).home);
        const problems = sources.filter((p) => !(p.here && opts.workerElsewhere));
        for (const p of sources.filter((q) => !problems.includes(q))) console.log(`warning: ${p.text} (on this host)`);
        if (problems.length > 0) {
          for (const p of problems) console.log(p.text);
          process.exitCode = EXIT_USAGE;
          return;
        }
      }
      const knobs: KnobCheck = finding?.here ? { problems: [] } : await checkKnobs(spec, resolveConfig(process.env, process.cwd()).home);
      if (knobs.problems.length > 0) {
        for (const p of knobs.problems) console.log(p);
        process.exitCode = EXIT_USAGE;
        return;
      }
      if (knobs.unchecked) console.error(`note: trainer knobs not checked: ${knobs.unchecked}`);
      console.log('ok');
    });
}

/**
 * The task's inputs and metric names: a custom task's dataset and suite must be registered (one line naming an
 * unknown one), and every metric the spec names must be one its suite reports. Without a database, a custom task's
 * inputs cannot be looked up: a warning, not a problem.
 */
async function taskProblems(spec: CampaignSpec): Promise<string[]> {
  if (spec.task.kind !== 'custom') return unreportedMetrics(spec, await reportedMetrics(undefined, spec.task));
  try {
    return await withDb(async (db) => unreportedMetrics(spec, await reportedMetrics(db, await pinTask(db, spec.task))));
  } catch (e) {
    if (e instanceof UsageError) return [e.message];
    if (!(e instanceof NoStackError)) throw e;
    console.log(`warning: task: the dataset, the suite and the metric names are not checked: ${e.message}`);
    return [];
  }
}

/**
 * Paths the spec would show its trainer that the sandbox exists to hide (backends/sandbox/exposed-paths.ts): checked
 * against this host's FLYWHEEL_HOME and Flywheel's scratch, and, when a database answers, every registered suite's file.
 */
async function exposureProblems(spec: CampaignSpec): Promise<string[]> {
  const paths = exposedPaths(spec.trainer);
  if (paths.length === 0) return [];
  const ctx = { home: resolveConfig(process.env, process.cwd()).home, scratch: [predictScratchRoot()], ownUid: process.getuid?.() === 0 };
  try {
    return await withDb(async (db) => exposedPathProblems(paths, { ...ctx, suiteSources: await registeredSuiteSources(db) }));
  } catch {
    // No stack, or a database without Flywheel's tables: what this host can tell. The training worker checks the
    // registered suites itself (checkTrainer) before a loop writes anything.
    return exposedPathProblems(paths, ctx);
  }
}

/** What this host can tell about the spec's own trainer: a problem found here, or a note that it cannot look. */
function trainerFinding(spec: CampaignSpec): { text: string; here: boolean } | undefined {
  const { trainer, backend } = spec;
  if (trainer.command === 'builtin') return undefined;
  if (!SANDBOXED_BACKENDS.has(backend.kind))
    return { text: `not checked: backend.kind ${backend.kind} runs the trainer in the cluster's container`, here: false };
  const home = resolveConfig(process.env, process.cwd()).home;
  const start = trainerStart({
    argv: trainerArgv(trainer.command, home, 'train', []),
    ...(trainer.command === 'hf' ? { programHint: HF_SETUP_HINT } : {}),
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
