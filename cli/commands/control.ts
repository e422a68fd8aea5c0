// Steering a running inner loop: pause, resume, stop (signals), budget and approve (updates, validated by
// the workflow, so a wrong value is refused with its reason and changes nothing).
import type { Command } from 'commander';
import { approveProposalUpdate, pauseSignal, resumeSignal, setBudgetUpdate, stopSignal } from '../../contracts/inner-loop';
import { latestInnerLoop } from '../../services/campaign-loops';
import { UsageError } from '../errors';
import { integerOption } from '../integer-option';
import { withSession, type Session } from '../session';

async function loopOf(s: Session, campaignId: string) {
  const h = await latestInnerLoop(s.client, campaignId);
  if (!h) throw new UsageError(`no inner loop found for campaign "${campaignId}"`);
  return h;
}

export function registerControl(program: Command): void {
  const signals = { pause: pauseSignal, resume: resumeSignal, stop: stopSignal } as const;
  const help = {
    pause: 'start no new experiment until resumed',
    resume: 'continue a paused loop',
    stop: 'finish running experiments, then select the winner',
  };
  for (const name of ['pause', 'resume', 'stop'] as const) {
    program
      .command(name)
      .description(`${help[name]} (signals the latest inner loop)`)
      .argument('<campaign>')
      .option('--json', 'print {"workflowId", "sent"} as JSON')
      .addHelpText(
        'after',
        `\nExit codes: 0 sent, 1 Temporal unreachable, 2 no inner loop for the campaign.\n\nExample:\n  $ flywheel ${name} builtin-demo\n`,
      )
      .action(async (campaignId: string, opts: { json?: boolean }) =>
        withSession(async (s) => {
          const h = await loopOf(s, campaignId);
          await h.signal(signals[name]);
          console.log(opts.json ? JSON.stringify({ workflowId: h.workflowId, sent: name }) : `${name} sent to ${h.workflowId}`);
        }),
      );
  }
  program
    .command('budget')
    .description("change a running loop's budget")
    .argument('<campaign>')
    .option('--experiments <n>', 'total experiments', integerOption('--experiments', 0))
    .option('--parallelism <n>', 'experiments at once', integerOption('--parallelism', 1))
    .option('--json', 'print {"workflowId", "experiments", "parallelism"} as JSON')
    .addHelpText(
      'after',
      '\nExit codes: 0 changed, 1 refused by the loop or Temporal unreachable, 2 no inner loop for the campaign.\n\nExample:\n  $ flywheel budget builtin-demo --experiments 20 --parallelism 3\n',
    )
    .action(async (campaignId: string, opts: { experiments?: number; parallelism?: number; json?: boolean }) =>
      withSession(async (s) => {
        const h = await loopOf(s, campaignId);
        const r = await h.executeUpdate(setBudgetUpdate, { args: [{ experiments: opts.experiments, parallelism: opts.parallelism }] });
        console.log(
          opts.json
            ? JSON.stringify({ workflowId: h.workflowId, ...r })
            : `budget of ${h.workflowId}: ${r.experiments} experiments, ${r.parallelism} at once`,
        );
      }),
    );
  program
    .command('approve')
    .description('approve (or --reject) a proposal awaiting approval')
    .argument('<campaign>')
    .argument('<experimentId>')
    .option('--reject', 'reject instead')
    .option('--json', 'print {"workflowId", "result"} as JSON')
    .addHelpText(
      'after',
      '\nExit codes: 0 decided, 1 refused by the loop (not awaiting approval) or Temporal unreachable, 2 no inner loop.\n\nExample:\n  $ flywheel approve builtin-demo builtin-demo/inner/20261202-150000/e3\n',
    )
    .action(async (campaignId: string, experimentId: string, opts: { reject?: boolean; json?: boolean }) =>
      withSession(async (s) => {
        const h = await loopOf(s, campaignId);
        const result = await h.executeUpdate(approveProposalUpdate, { args: [{ experimentId, approve: !opts.reject }] });
        console.log(opts.json ? JSON.stringify({ workflowId: h.workflowId, result }) : result);
      }),
    );
}
