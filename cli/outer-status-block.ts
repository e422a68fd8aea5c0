// The block `flywheel status CAMPAIGN` prints first when the campaign has an outer loop: which one, its phase and
// iteration, and a promotion awaiting approval with its evidence and the command that answers it.
import { decisionText } from '../core/gate/decision-lines';
import type { Client } from '@temporalio/client';
import { latestOuterLoop } from '../services/campaign-loops';
import { loopEndReason } from '../services/loop-failures';
import type { Endpoints } from '../stack/endpoints';
import { queryOuterStatus } from './follow-outer';
import { formatEvidence, phaseLine } from './outer-view';
import { uiLink } from '../temporal/ui-links';
import type { OuterIterationSummary } from '../contracts/outer-loop';

const lastLine = (s: OuterIterationSummary | undefined): string[] =>
  s ? decisionText(s.reason, '  ', `last iteration: ${s.iteration} ${s.status}: `) : [];

/** The block's text, or undefined when the campaign never had an outer loop. */
export async function outerStatusBlock(client: Client, e: Endpoints, campaignId: string): Promise<string | undefined> {
  const handle = await latestOuterLoop(client, campaignId);
  if (!handle) return undefined;
  const status = (await handle.describe()).status.name;
  const link = uiLink(e, handle.workflowId);
  const head = `outer loop ${handle.workflowId}: ${status}${link ? `  (${link})` : ''}`;
  if (status === 'COMPLETED') return [head, ...lastLine((await handle.result()).iterations.at(-1))].join('\n');
  if (status !== 'RUNNING') return `${head}\n  reason: ${await loopEndReason(handle)}`;
  const st = await queryOuterStatus(handle);
  if (!st) return `${head}\n  (no answer to the status query: is an orchestration worker running?)`;
  return [
    `${head}\n  ${phaseLine(st)}`,
    ...lastLine(st.done.at(-1)),
    ...(st.awaitingApproval ? [formatEvidence(st.awaitingApproval, campaignId)] : []),
  ].join('\n');
}
