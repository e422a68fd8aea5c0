// `flywheel outer CAMPAIGN`: start one outer-loop run now (one or more iterations, back to back) and follow it:
// a line per phase, the evidence of a promotion awaiting approval, then a table of the iterations.
import type { Command } from 'commander';
import type { OuterLoopInput } from '../../contracts/outer-loop';
import { latestOuterLoop, startOuterLoopWorkflow } from '../../services/campaign-loops';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { detachOnSigint } from '../detach';
import { LoopFailedError, UsageError } from '../errors';
import { followOuterLoop } from '../follow-outer';
import { integerOption } from '../integer-option';
import { formatIterations } from '../outer-view';
import { requireCampaign } from '../require-campaign';
import { withSession } from '../session';
import { uiLink } from '../../temporal/ui-links';

interface OuterOptions {
  /**
   * A spec file to run with: registered as a campaign version, which every iteration of this run pins.
   * @default the campaign's latest version, taken by each iteration when it is claimed
   */
  spec?: string;
  /** Iterations back to back. @default 1 */
  iterations?: number;
  /** Each inner loop's experiment budget. @default the spec's */
  experiments?: number;
  /** Each inner loop's experiments at once. @default the spec's */
  parallelism?: number;
  /** Return once started. @default false */
  detach?: boolean;
  /** The iterations as JSON on stdout; progress on stderr. @default false */
  json?: boolean;
}

export function registerOuter(program: Command): void {
  program
    .command('outer')
    .description("run a campaign's outer loop now and follow it (Ctrl-C detaches; the loop keeps running)")
    .argument('<campaign>', 'campaign id (registered, or given with --spec)')
    .option('--spec <file>', 'the campaign spec to run with (registered as a version; every iteration of this run pins it)')
    .option('--iterations <n>', 'iterations back to back (default 1)', integerOption('--iterations', 1, 999_999))
    .option('--experiments <n>', "each inner loop's experiment budget (default: the spec's)", integerOption('--experiments', 1, 999_999))
    .option('--parallelism <n>', "each inner loop's experiments at once (default: the spec's)", integerOption('--parallelism', 1, 999_999))
    .option('--detach', 'start it and return at once')
    .option('--json', 'print the iterations as JSON (progress goes to stderr)')
    .addHelpText('after', '\nExample:\n  $ flywheel outer builtin-demo --iterations 2 --experiments 8\n')
    .action(async (campaignId: string, opts: OuterOptions) => {
      const ctrlC = detachOnSigint();
      await withSession(async (s) => {
        const { spec } = await requireCampaign(s.db, campaignId, opts.spec);
        // One iteration of a campaign at a time, as the schedule's overlap policy keeps it (best effort: visibility lags).
        const running = await latestOuterLoop(s.client, campaignId, { running: true });
        if (running)
          throw new UsageError(
            `campaign "${campaignId}" already has a running outer loop, ${running.workflowId}: follow it with \`flywheel status ${campaignId}\``,
          );
        const innerBudget =
          opts.experiments || opts.parallelism ? { experiments: opts.experiments, parallelism: opts.parallelism } : undefined;
        let campaignVersionId: string | undefined;
        if (opts.spec !== undefined) {
          const version = await registerCampaignVersion(s.db, spec, opts.spec);
          campaignVersionId = version.versionId;
          console.error(`campaign ${version.versionId} (${version.created ? 'new' : 'existing'})`);
        }
        const input: OuterLoopInput = { campaignId, campaignVersionId, iterations: opts.iterations ?? 1, trigger: 'cli', innerBudget };
        const handle = await startOuterLoopWorkflow(s.client, s.endpoints, input);
        const link = uiLink(s.endpoints, handle.workflowId);
        console.error(`started ${handle.workflowId}${link ? `\n  Temporal UI: ${link}` : ''}`);
        if (opts.detach) return;
        const outcome = await followOuterLoop(handle, {
          campaignId,
          detach: ctrlC.requested,
          out: opts.json ? process.stderr : process.stdout,
        });
        if (outcome.kind === 'failed') throw new LoopFailedError(`${handle.workflowId} ended ${outcome.status}: ${outcome.reason}`);
        if (outcome.kind === 'detached')
          console.error(`\ndetached: ${handle.workflowId} keeps running; reattach with \`flywheel status ${campaignId}\``);
        else console.log(opts.json ? JSON.stringify(outcome.result.iterations, null, 2) : formatIterations(outcome.result.iterations));
      }).finally(() => ctrlC.dispose());
    });
}
