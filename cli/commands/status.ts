// `flywheel status CAMPAIGN`: reattaches to the campaign's latest inner loop (or prints how it ended).
import type { Command } from 'commander';
import { latestInnerLoop } from '../../services/campaign-loops';
import { UsageError } from '../errors';
import { detachOnSigint } from '../detach';
import { followLoop, runSteps } from '../follow-loop';
import { snapshot } from '../loop-progress';
import { outerStatusBlock } from '../outer-status-block';
import { formatResult } from '../print-result';
import { renderSnapshot } from '../progress-view';
import { withSession, type Session } from '../session';
import { uiLink } from '../../temporal/ui-links';
import { loadCampaignSpec } from '../../services/campaigns/load-campaign';
import { loadCampaignVersion } from '../../services/campaigns/campaign-versions';
import { campaignVersionOfLoop } from '../../services/queries/inner-loops';
import { formatAnalysis, latestAnalysis } from '../../services/latest-analysis';
import { loopEndReason } from '../../services/loop-failures';
import { printRunningLoops } from '../running-loops';
import { survivorsLine, survivorsOf } from '../../services/queries/survivors';
import { outerIterationsOf } from '../../services/queries/outer-iterations';
import { sealedTestLine, sealedTestOf } from '../../services/queries/sealed-test';
import { summaryMetricsOfSpec } from '../../services/task-registry';
import type { CampaignSpec } from '../../core/spec';

export function registerStatus(program: Command): void {
  program
    .command('status')
    .description("show a campaign's outer loop (if any), then its latest inner loop: follow it while it runs, or print its result")
    .argument('[campaign]', 'campaign id (the spec name); without it, the loops running now')
    .option('--once', 'print one snapshot instead of following')
    .option('--json', 'machine-readable output')
    .addHelpText('after', '\nExamples:\n  $ flywheel status builtin-demo --once\n  $ flywheel status\n')
    .action(async (campaignId: string | undefined, opts: { once?: boolean; json?: boolean }) => {
      if (campaignId === undefined) return printRunningLoops(!!opts.json);
      const ctrlC = detachOnSigint();
      await withSession(async (s) => {
        // The outer loop first (to stderr with --json, where stdout stays one JSON document).
        const outer = await outerStatusBlock(s.client, s.endpoints, campaignId);
        if (outer) {
          const test = sealedTestLine(sealedTestOf(await outerIterationsOf(s.db, campaignId)));
          (opts.json ? console.error : console.log)(`${outer}\n  ${survivorsLine(await survivorsOf(s.db, campaignId))}\n  ${test}\n`);
        }
        const handle = await latestInnerLoop(s.client, campaignId);
        if (!handle && outer) return;
        if (!handle) throw new UsageError(`no inner or outer loop found for campaign "${campaignId}"`);
        const desc = await handle.describe();
        const link = uiLink(s.endpoints, handle.workflowId);
        const analysis = await latestAnalysis(s.db, handle.workflowId);
        if (desc.status.name !== 'RUNNING') {
          const result = desc.status.name === 'COMPLETED' ? await handle.result() : undefined;
          const summary = result ? summaryMetricsOfSpec(await specOfLoop(s, handle.workflowId, campaignId)) : [];
          // A loop refused before its first write (its trainer cannot start) has no campaign row: the reason is Temporal's.
          const reason = result ? undefined : await loopEndReason(handle);
          if (opts.json)
            console.log(JSON.stringify({ workflowId: handle.workflowId, status: desc.status.name, reason, result, analysis }, null, 2));
          else
            console.log(
              `${handle.workflowId}: ${desc.status.name}${link ? `  (${link})` : ''}${reason ? `\n  reason: ${reason}` : ''}${result ? '\n' + formatResult(result, summary) : ''}${analysis ? `\n${formatAnalysis(analysis)}` : ''}`,
            );
          return;
        }
        const spec = await specOfLoop(s, handle.workflowId, campaignId);
        if (opts.once) {
          const snap = await snapshot(handle, s.db, runSteps(spec));
          console.log(
            opts.json
              ? JSON.stringify({ workflowId: handle.workflowId, ...snap, analysis }, null, 2)
              : `${renderSnapshot(snap, spec.selection.metric)}${analysis ? `\n${formatAnalysis(analysis)}` : ''}`,
          );
          return;
        }
        if (analysis && !opts.json) console.log(formatAnalysis(analysis));
        console.error(`following ${handle.workflowId}${link ? `  (${link})` : ''}`);
        await followLoop(s, handle, spec, !!opts.json, ctrlC.requested);
      }).finally(() => ctrlC.dispose());
    });
}

/** The loop's own pinned version's spec (what it runs), else the campaign's latest. */
async function specOfLoop(s: Session, workflowId: string, campaignId: string): Promise<CampaignSpec> {
  const pinned = await campaignVersionOfLoop(s.db, workflowId);
  return pinned ? (await loadCampaignVersion(s.db, pinned)).spec : await loadCampaignSpec(s.db, campaignId);
}
