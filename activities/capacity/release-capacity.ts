// releaseCapacity: frees the run's slot when its training has ended (or never started). Idempotent.
import type { ActivityDeps } from '../deps';
import { runIdOf } from '../../contracts/run-id';
import { releaseSlot } from '../../services/capacity';
import type { ReleaseCapacityInput } from '../../contracts/training';

export async function releaseCapacity(deps: ActivityDeps, input: ReleaseCapacityInput): Promise<{ released: boolean }> {
  return { released: await releaseSlot(deps.db, runIdOf(input.experimentId, input.attempt)) };
}
