// loopSettings: what the inner loop keeps in its state from the campaign version it runs (budget, selection,
// pruning, …), read once at its start; an edited spec is another version and never reaches it.
import { loopSettings as settingsOf, type LoopSettings } from '../../core/loop-settings';
import type { LoopSettingsInput } from '../../contracts/campaign';

import { campaignsOf, type ActivityDeps } from '../deps';

export async function loopSettings(deps: ActivityDeps, input: LoopSettingsInput): Promise<LoopSettings> {
  return settingsOf(await campaignsOf(deps).resolve(input.campaignVersionId));
}
