// Where runs, datasets and eval scratch live under FLYWHEEL_HOME. Ids contain '/', so they are flattened.
import path from 'node:path';

export function safeName(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]+/g, '_');
}

export const runDirOf = (home: string, runId: string) => path.join(home, 'runs', safeName(runId));
export const evalDirOf = (home: string, checkpointId: string, split: string) => path.join(home, 'evals', safeName(checkpointId), split);
export const datasetDirOf = (home: string, versionId: string) => path.join(home, 'datasets', safeName(versionId));
export const corpusDirOf = (home: string) => path.join(home, 'corpus');
