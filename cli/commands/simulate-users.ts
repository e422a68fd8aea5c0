// `flywheel simulate-users CAMPAIGN --round R`: one round of simulated user traffic against a running
// `flywheel serve` (completions from the production model, judged, sent back as feedback). For demos and tests.
import type { Command } from 'commander';
import { resolveConfig } from '../../core/config';
import { simulateUsers } from '../../services/simulate-users';
import { DEFAULT_EXAMPLE_TASK, EXAMPLE_TASK_NAMES, exampleTask } from '../../services/example-tasks';
import { integerOption } from '../integer-option';
import { taskUsers } from '../task-users';

export function registerSimulateUsers(program: Command): void {
  program
    .command('simulate-users')
    .description('one round of simulated users: completions from the production model, judged and sent back as feedback')
    .argument('<campaign>', 'the campaign whose production model the users call')
    .requiredOption(
      '--round <n>',
      'round number (part of every event id: a re-run round stores nothing twice)',
      integerOption('--round', 0),
    )
    .option('--url <url>', 'the `flywheel serve` to talk to', 'http://127.0.0.1:8787')
    .option('--events <n>', 'events to send', integerOption('--events', 1, 100_000), 50)
    .option('--seed <n>', 'seeds the users, the prompts and who answers which', integerOption('--seed', -2147483648, 2147483647), 1)
    .option('--users <n>', 'users in the population', integerOption('--users', 1, 100_000), 20)
    .option(
      '--task <name>',
      `whose users: ${EXAMPLE_TASK_NAMES.join(' or ')}, or custom (the program the campaign's spec names as task.users.command)`,
      DEFAULT_EXAMPLE_TASK,
    )
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      [
        '',
        "What each task's users ask:",
        ...EXAMPLE_TASK_NAMES.map((n) => `  ${n}: ${exampleTask(n).usersAsk ?? 'its own prompts'}`),
        "  custom: what the campaign's users program asks (task.users.command, JSON lines in and out: docs/tasks.md)",
        'FLYWHEEL_API_TOKEN is sent when set.',
        '',
        'Example:',
        '  $ flywheel simulate-users builtin-demo --round 1 --events 200 --seed 7',
        '  round 1: sent 200 (inserted 200, duplicates 0): accept 31, edit 84, reject 40, rating 45; model <checkpoint id>',
        '',
      ].join('\n'),
    )
    .action(
      async (
        campaign: string,
        opts: { round: number; url: string; events: number; seed: number; users: number; task: string; json?: boolean },
      ) => {
        const config = resolveConfig(process.env, process.cwd());
        const { users: task, close } = await taskUsers(campaign, opts.task, { home: config.home, seed: opts.seed });
        const r = await simulateUsers({
          apiUrl: opts.url,
          token: process.env.FLYWHEEL_API_TOKEN || undefined,
          campaignId: campaign,
          round: opts.round,
          events: opts.events,
          seed: opts.seed,
          users: opts.users,
          task,
        }).finally(close);
        if (opts.json) return console.log(JSON.stringify(r));
        const kinds = Object.entries(r.byKind)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ');
        console.log(
          `round ${opts.round}: sent ${r.sent} (inserted ${r.inserted}, duplicates ${r.duplicates}): ${kinds}; model ${r.modelVersions.join(', ')}`,
        );
      },
    );
}
