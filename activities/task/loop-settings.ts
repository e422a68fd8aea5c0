// loopSettings: what the inner loop keeps in its state from the campaign version it runs (budget, selection,
// pruning, …), read once at its start; an edited spec is another version and never reaches it. A metric name
// (`selection.metric`, the gate's `metric`) that the campaign's suite does not report is refused here, before the
// loop writes anything: one line per name, listing the valid ones (UsageError, not retried).
import { UsageError } from '../../core/errors';
import { loopSettings as settingsOf, type LoopSettings } from '../../core/loop-settings';
import { reportedMetrics, unreportedMetrics } from '../../services/suites/spec-metrics';
import type { LoopSettingsInput } from '../../contracts/campaign';

import { campaignsOf, type ActivityDeps } from '../deps';

export async function loopSettings(deps: ActivityDeps, input: LoopSettingsInput): Promise<LoopSettings> {
  const spec = await campaignsOf(deps).resolve(input.campaignVersionId);
  const problems = unreportedMetrics(spec, await reportedMetrics(deps.db, spec.task));
  if (problems.length > 0) throw new UsageError(`campaign version "${input.campaignVersionId}": ${problems.join('; ')}`);
  return settingsOf(spec);
}
