// One Flywheel experiment as an MLflow run: its knobs as params, its training curves (`train/<metric>` by step) and
// its public-split metrics (`public/<metric>`) as metrics, and tags naming the campaign, campaign version, dataset and
// suite versions, the experiment and the decisions about it. Pure. Nothing held out goes in: the input
// (services/queries/experiments-to-export.ts) holds no held-out or test figure, item or text.
import type { ExperimentToExport } from '../queries/experiments-to-export';
import type { MlflowMetric, MlflowTag } from './mlflow-client';

/** The tag every exported run carries: a re-export finds the run by it and updates it instead of adding another. */
export const EXPERIMENT_TAG = 'flywheel.experiment_id';

/** MLflow's run status for each experiment status. */
const STATUS: Record<string, string> = {
  proposed: 'SCHEDULED',
  running: 'RUNNING',
  succeeded: 'FINISHED',
  failed: 'FAILED',
  pruned: 'KILLED',
  cancelled: 'KILLED',
};

const MAX_PARAM_VALUE = 6000;
const MAX_TAG_VALUE = 5000;

/** MLflow keys take letters, digits, `_ - . / ` and spaces: anything else becomes `_`. */
const key = (k: string): string => k.replace(/[^A-Za-z0-9_\-./ ]/g, '_').slice(0, 250);

export interface MlflowRunDraft {
  runName: string;
  startTime: number;
  endTime?: number;
  status: string;
  tags: MlflowTag[];
  params: MlflowTag[];
  metrics: MlflowMetric[];
}

export function mlflowRunOf(campaignId: string, e: ExperimentToExport): MlflowRunDraft {
  const at = e.at.getTime();
  const tag = (k: string, v: string | null | undefined): MlflowTag[] => (v ? [{ key: k, value: v.slice(0, MAX_TAG_VALUE) }] : []);
  const verdicts = e.decisions.map((d) => `${d.kind} ${d.accepted ? 'accepted' : 'refused'} (${d.rule})`).join('; ');
  const tags = [
    ...tag(EXPERIMENT_TAG, e.id),
    ...tag('flywheel.campaign', campaignId),
    ...tag('flywheel.campaign_version', e.campaignVersionId),
    ...tag('flywheel.inner_loop', e.innerLoopId),
    ...tag('flywheel.dataset_version', e.datasetVersionId),
    ...tag('flywheel.suite_version', e.publicEval?.suiteId),
    ...tag('flywheel.status', e.status),
    ...tag('flywheel.proposer', e.proposer),
    ...tag('flywheel.decision', verdicts),
    ...tag('mlflow.note.content', e.hypothesis),
  ];
  const params = Object.entries(e.params).map(([k, v]) => ({
    key: key(k),
    value: (typeof v === 'string' ? v : JSON.stringify(v)).slice(0, MAX_PARAM_VALUE),
  }));
  const metrics: MlflowMetric[] = [
    ...e.curves
      .filter((p) => Number.isFinite(p.value))
      .map((p) => ({ key: key(`train/${p.name}`), value: p.value, timestamp: at, step: p.step })),
    ...Object.entries(e.publicEval?.metrics ?? {})
      .filter(([, v]) => Number.isFinite(v))
      .map(([k, v]) => ({ key: key(`public/${k}`), value: v, timestamp: at, step: 0 })),
    ...(e.publicScore !== null && Number.isFinite(e.publicScore)
      ? [{ key: 'public_score', value: e.publicScore, timestamp: at, step: 0 }]
      : []),
  ];
  return {
    runName: e.id,
    startTime: at,
    ...(e.finishedAt ? { endTime: e.finishedAt.getTime() } : {}),
    status: STATUS[e.status] ?? 'RUNNING',
    tags,
    params,
    metrics,
  };
}
