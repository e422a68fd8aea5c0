// Picks the backend a campaign's spec names.
import type { TrainingBackend } from './backend';
import { LocalBackend } from './local/local-backend';

export type { JobHandle, JobStatus, TrainingBackend } from './backend';

export function backendFor(kind: string): TrainingBackend {
  switch (kind) {
    case 'local':
      return new LocalBackend();
    default:
      throw new Error(`unknown training backend "${kind}"`);
  }
}
