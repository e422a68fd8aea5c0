// afterAll for tests that start outer loops with no worker: delete the campaigns' schedules and terminate every
// outer loop they started (none would ever finish).
import { ScheduleNotFoundError, type Client } from '@temporalio/client';

export async function cleanUpOuterLoops(client: Client, campaignIds: string[]): Promise<void> {
  for (const campaignId of campaignIds) {
    await client.schedule
      .getHandle(`${campaignId}/outer`)
      .delete()
      .catch((e: unknown) => {
        if (!(e instanceof ScheduleNotFoundError)) throw e;
      });
    for await (const wf of client.workflow.list({ query: `CampaignId = "${campaignId}" AND ExecutionStatus = "Running"` })) {
      await client.workflow.getHandle(wf.workflowId, wf.runId).terminate('test clean-up');
    }
  }
}
