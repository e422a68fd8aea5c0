// A training run as awaitTraining finds it, without a trainer: a fixture campaign's experiment row and its first
// run's row (on a backend named `fake`), a run directory holding the metrics lines given, and the fake backend that
// reports the job's status. For tests that drive awaitTraining directly.
import fs from 'node:fs';
import path from 'node:path';
import type { JobHandle, JobStatus, TrainingBackend } from '../../backends';
import { METRICS_FILE } from '../../core/contract-files';
import { runIdOf } from '../../contracts/run-id';
import type { AwaitTrainingInput } from '../../contracts/training';
import type { Db } from '../../db/client';
import { experiments, trainingRuns } from '../../db/schema';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { fixtureSpec } from './specs';

export interface FakeRun {
  experimentId: string;
  runId: string;
  runDir: string;
  handle: JobHandle;
  innerLoopId: string;
}

/** awaitTraining's input for a run: no pruning and a 600 s limit unless `over` says otherwise. */
export function awaitInputOf(
  run: Pick<FakeRun, 'runId' | 'experimentId' | 'innerLoopId' | 'handle'>,
  over: Partial<AwaitTrainingInput> = {},
): AwaitTrainingInput {
  const { runId, experimentId, innerLoopId, handle } = run;
  return {
    runId,
    experimentId,
    innerLoopId,
    handle,
    pruning: { rule: 'none', warmupSteps: 0, minCompleted: 1, metric: 'loss' },
    timeoutSeconds: 600,
    ...over,
  };
}

export async function insertFakeRun(db: Db, home: string, name: string, metrics: string, jobRef = 'job-1'): Promise<FakeRun> {
  const { versionId: campaignVersionId } = await registerCampaignVersion(db, fixtureSpec(name, { steps: 1 }));
  const innerLoopId = `${name}/inner`;
  const experimentId = `${innerLoopId}/e1`;
  const runId = runIdOf(experimentId, 1);
  const runDir = path.join(home, name);
  fs.mkdirSync(runDir, { recursive: true });
  fs.writeFileSync(path.join(runDir, METRICS_FILE), metrics);
  const handle: JobHandle = { backend: 'fake', runId, runDir, ref: jobRef };
  await insertRunRows(db, { campaignId: name, campaignVersionId, innerLoopId, experimentId, handle });
  return { experimentId, runId, runDir, handle, innerLoopId };
}

/** The rows awaitTraining reads for a launched job: the experiment's (running) and its first run's. */
export async function insertRunRows(
  db: Db,
  r: { campaignId: string; campaignVersionId: string; innerLoopId: string; experimentId: string; handle: JobHandle },
): Promise<void> {
  await db.insert(experiments).values({
    id: r.experimentId,
    campaignId: r.campaignId,
    campaignVersionId: r.campaignVersionId,
    innerLoopId: r.innerLoopId,
    index: 1,
    datasetVersionId: 'v',
    params: {},
    proposer: 'test',
    status: 'running',
  });
  await db.insert(trainingRuns).values({
    id: r.handle.runId,
    experimentId: r.experimentId,
    attempt: 1,
    backend: r.handle.backend,
    handle: r.handle,
    runDir: r.handle.runDir,
    status: 'running',
  });
}

/** A backend named `fake` whose job is `handle` and whose status is `status()`; cancel and stderr do nothing. */
export function fakeBackend(handle: JobHandle, status: () => JobStatus): TrainingBackend {
  return {
    kind: 'fake',
    launch: async () => handle,
    status: async () => status(),
    cancel: async () => undefined,
    stderrTail: async () => '',
  };
}
