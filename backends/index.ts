// Picks the backend a campaign's spec names.
import type { TrainingBackend } from './backend';
import { LocalBackend } from './local/local-backend';
import { RayBackend, type RayResources } from './ray/ray-backend';
import { KubernetesBackend, type KubernetesBackendOptions } from './kubernetes/kubernetes-backend';
import { SlurmBackend, type SlurmResources } from './slurm/slurm-backend';

export type { JobHandle, JobStatus, LaunchRequest, TrainingBackend } from './backend';

/** The spec's `backend` block, as far as building a backend needs it. */
export interface BackendOptions {
  /** Resources for each Slurm job; status, cancel and stderrTail need none, so a reattaching worker may omit them. */
  slurm?: SlurmResources;
  /** Resources for each Ray job; status, cancel and stderrTail read the head's address from the launch dir. */
  ray?: RayResources;
  /** The Job for each run (image, resources, namespace); status, cancel and stderrTail need only the run's handle. */
  kubernetes?: KubernetesBackendOptions;
}

export function backendFor(kind: string, options: BackendOptions = {}): TrainingBackend {
  switch (kind) {
    case 'local':
      return new LocalBackend();
    case 'slurm':
      return new SlurmBackend(options.slurm);
    case 'ray':
      return new RayBackend(options.ray);
    case 'kubernetes':
      return new KubernetesBackend(options.kubernetes);
    default:
      throw new Error(`unknown training backend "${kind}"`);
  }
}
