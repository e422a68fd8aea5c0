// The handle of a launched training job: what the workflow carries between launch and await, and what a new worker
// reattaches with. Every backend returns one.
/** Enough to find the job again from another worker process: stored in PostgreSQL and in heartbeats. */
export interface JobHandle {
  backend: string;
  /** The run id the job was launched for. */
  runId: string;
  runDir: string;
  /** Backend-specific: a pid, a Slurm job id, a Kubernetes Job name. */
  ref: string;
}
