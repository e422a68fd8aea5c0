// `flywheel promote CAMPAIGN --approve|--reject`: answers the promotion the campaign's running outer loop is
// waiting on (the `approvePromotion` update); the workflow refuses, with its reason, when none is pending.
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { Command } from 'commander';
import { approvePromotionUpdate } from '../../contracts/outer-loop';
import { latestOuterLoop } from '../../services/campaign-loops';
import { UsageError } from '../errors';
import { withSession } from '../session';

export function registerPromote(program: Command): void {
  program
    .command('promote')
    .description("approve or reject the promotion a campaign's running outer loop awaits")
    .argument('<campaign>')
    .option('--approve', 'promote the candidate to production')
    .option('--reject', 'keep the production model')
    .option('--note <text>', 'why (recorded with the decision)')
    .addHelpText('after', '\nExample:\n  $ flywheel promote builtin-demo --approve --note "deltas look real"\n')
    .action(async (campaignId: string, opts: { approve?: boolean; reject?: boolean; note?: string }) => {
      if (!!opts.approve === !!opts.reject) throw new UsageError('give exactly one of --approve and --reject');
      await withSession(async (s) => {
        const h = await latestOuterLoop(s.client, campaignId, { running: true });
        if (!h) throw new UsageError(`no running outer loop for campaign "${campaignId}": nothing awaits approval`);
        const decision = { approve: !!opts.approve, by: process.env.USER ?? 'cli', note: opts.note };
        try {
          console.log(`${h.workflowId}: ${await h.executeUpdate(approvePromotionUpdate, { args: [decision] })}`);
        } catch (err) {
          if (err instanceof WorkflowUpdateFailedError)
            throw new UsageError(`${h.workflowId} refused: ${(err.cause as Error | undefined)?.message ?? err.message}`);
          throw err;
        }
      });
    });
}
