// releaseCapacity: frees the run's slot when its training has ended (or never started). Idempotent.
import type { ActivityDeps } from '../deps';
import { runIdOf } from '../training/run-id';
import { releaseSlot } from './capacity-slots';

export interface ReleaseCapacityInput {
  experimentId: string;
  attempt: number;
}

export async function releaseCapacity(deps: ActivityDeps, input: ReleaseCapacityInput): Promise<{ released: boolean }> {
  return { released: await releaseSlot(deps.db, runIdOf(input.experimentId, input.attempt)) };
}
