// The `flywheel` commander program: one file per subcommand, each loaded only when needed. cli/main.ts runs it;
// tests walk it (every command's help has an example).
// To add a command, write cli/commands/<name>.ts exporting register<Name>(program) and add one line below.
import type { Command as CommandType } from 'commander';
import { Command } from 'commander';

type Register = (program: CommandType) => void;

/**
 * One line per command file: the command names it registers, and how to load it. A file is loaded only when one of
 * its commands runs (or for help), so `flywheel worker` does not pay for the imports of `flywheel run`, and so on.
 */
const COMMANDS: Array<[names: string[], load: () => Register]> = [
  [['up'], () => (require('./commands/up') as typeof import('./commands/up')).registerUp],
  [['worker'], () => (require('./commands/worker') as typeof import('./commands/worker')).registerWorker],
  [['validate'], () => (require('./commands/validate') as typeof import('./commands/validate')).registerValidate],
  [['dataset'], () => (require('./commands/dataset') as typeof import('./commands/dataset')).registerDataset],
  [['suite'], () => (require('./commands/suite') as typeof import('./commands/suite')).registerSuite],
  [['run'], () => (require('./commands/run') as typeof import('./commands/run')).registerRun],
  [['campaigns'], () => (require('./commands/campaigns') as typeof import('./commands/campaigns')).registerCampaigns],
  [['campaign'], () => (require('./commands/campaign') as typeof import('./commands/campaign')).registerCampaign],
  [['status'], () => (require('./commands/status') as typeof import('./commands/status')).registerStatus],
  [
    ['pause', 'resume', 'stop', 'budget', 'approve'],
    () => (require('./commands/control') as typeof import('./commands/control')).registerControl,
  ],
  [['outer'], () => (require('./commands/outer') as typeof import('./commands/outer')).registerOuter],
  [['promote'], () => (require('./commands/promote') as typeof import('./commands/promote')).registerPromote],
  [['schedule'], () => (require('./commands/schedule') as typeof import('./commands/schedule')).registerSchedule],
  [['demo'], () => (require('./commands/demo') as typeof import('./commands/demo')).registerDemo],
  [['serve'], () => (require('./commands/serve') as typeof import('./commands/serve')).registerServe],
  [['feedback'], () => (require('./commands/feedback') as typeof import('./commands/feedback')).registerFeedback],
  [['simulate-users'], () => (require('./commands/simulate-users') as typeof import('./commands/simulate-users')).registerSimulateUsers],
  [['propose'], () => (require('./commands/propose') as typeof import('./commands/propose')).registerPropose],
  [['recipe'], () => (require('./commands/recipe') as typeof import('./commands/recipe')).registerRecipe],
  [['lineage'], () => (require('./commands/lineage') as typeof import('./commands/lineage')).registerLineage],
  [['show', 'compare'], () => (require('./commands/show') as typeof import('./commands/show')).registerShow],
  [['codec-server'], () => (require('./commands/codec-server') as typeof import('./commands/codec-server')).registerCodecServer],
  [['report'], () => (require('./commands/report') as typeof import('./commands/report')).registerReport],
  [['export'], () => (require('./commands/export') as typeof import('./commands/export')).registerExport],
  [['setup'], () => (require('./commands/setup') as typeof import('./commands/setup')).registerSetup],
];

/** The program with every command, or only the file that registers `only` when that names a known command. */
export function buildProgram(only?: string): Command {
  const program = new Command('flywheel')
    .description('Durable model-improvement loops on Temporal')
    .version((require('../package.json') as { version: string }).version)
    // Subcommands created with .command() inherit these: usage errors throw (exit 2) instead of exiting 1.
    .exitOverride()
    .showHelpAfterError('(add --help for usage)');
  const wanted = COMMANDS.filter(([names]) => only !== undefined && names.includes(only));
  for (const [, load] of wanted.length ? wanted : COMMANDS) load()(program);
  return program;
}
