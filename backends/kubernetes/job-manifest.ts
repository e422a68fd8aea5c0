// The batch/v1 Job for one training run: a pure function of the run and the spec's `backend.kubernetes` block.
// The trainer's argv becomes the container's command/args arrays (never a shell string); Flywheel owns retries,
// so the Job never restarts a pod itself (backoffLimit 0, restartPolicy Never).
import crypto from 'node:crypto';
import path from 'node:path';
import type { V1Job, V1Toleration } from '@kubernetes/client-node';
import type { LaunchRequest } from '../backend';

/** The spec's `backend.kubernetes` block (defaults and meanings beside its zod schema in core/spec.ts). */
export interface KubernetesJobOptions {
  /** @default "default" */
  namespace?: string;
  image: string;
  serviceAccount?: string;
  pvcName?: string;
  runDirMount?: { workerPath: string; podPath: string };
  objectStoreUri?: string;
  cpu?: string | number;
  memory?: string;
  /** @default 0 */
  gpus?: number;
  /** @default {} */
  nodeSelector?: Record<string, string>;
  /** @default [] */
  tolerations?: V1Toleration[];
  /** @default the run's training time limit (LaunchRequest.timeLimitSeconds), else none */
  activeDeadlineSeconds?: number;
  /** @default 86400 */
  ttlSecondsAfterFinished?: number;
}

export const CONTAINER = 'trainer';
export const RUN_ID_LABEL = 'flywheel.dev/run-id';
export const CAMPAIGN_LABEL = 'flywheel.dev/campaign';
export const RUN_ID_ANNOTATION = 'flywheel.dev/run-id';
const VOLUME = 'flywheel-home';
/** Room left under the 63-character limit for a relaunch suffix (`-r2` … `-r999`). */
const BASE_MAX = 58;

export const runIdHash = (runId: string) => crypto.createHash('sha256').update(runId).digest('hex').slice(0, 12);

/**
 * The Job name for a run: `fw-` + 12 hex of sha256(runId) + a lowercase slug of the run id's tail, an RFC 1123
 * label of at most 58 characters (so the `-rN` of a relaunch still fits in 63). Deterministic.
 */
export function jobNameOf(runId: string): string {
  const head = `fw-${runIdHash(runId)}`;
  const slug = runId
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(-(BASE_MAX - head.length - 1))
    .replace(/^-+|-+$/g, '');
  return slug === '' ? head : `${head}-${slug}`;
}

/** The name of the run's `generation`-th Job: the base name, then `-r2`, `-r3` after preemptions. */
export const generationName = (base: string, generation: number) => (generation <= 1 ? base : `${base}-r${generation}`);

/** A label value: at most 63 of [A-Za-z0-9._-], starting and ending alphanumeric. */
export function labelValue(s: string): string {
  return s
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .slice(0, 63)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
}

/** A worker path as the pod sees it, under `runDirMount` (unchanged without one, or outside its prefix). */
export function podPathOf(p: string, mount: KubernetesJobOptions['runDirMount']): string {
  if (!mount) return p;
  const rel = path.relative(mount.workerPath, p);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return p;
  return path.join(mount.podPath, rel);
}

export function jobManifest(o: KubernetesJobOptions, req: LaunchRequest, name: string, generation: number): V1Job {
  const mount = o.runDirMount;
  // Without an explicit mapping the PVC holds FLYWHEEL_HOME (…/runs/<run>) at the same path as on the worker.
  const workerHome = mount?.workerPath ?? path.dirname(path.dirname(req.runDir));
  const podHome = mount?.podPath ?? workerHome;
  const argv = req.argv.map((a) => podPathOf(a, { workerPath: workerHome, podPath: podHome }));
  const runDir = podPathOf(req.runDir, { workerPath: workerHome, podPath: podHome });
  const env = Object.entries(req.env ?? {}).map(([k, v]) => ({ name: k, value: v }));
  env.push({ name: 'FLYWHEEL_RUN_DIR', value: runDir }, { name: 'FLYWHEEL_JOB_GENERATION', value: String(generation) });
  if (o.objectStoreUri)
    env.push({ name: 'FLYWHEEL_RUN_URI', value: `${o.objectStoreUri.replace(/\/+$/, '')}/${path.basename(req.runDir)}` });

  const limits: Record<string, string> = {};
  if (o.cpu !== undefined) limits.cpu = String(o.cpu);
  if (o.memory !== undefined) limits.memory = o.memory;
  if ((o.gpus ?? 0) > 0) limits['nvidia.com/gpu'] = String(o.gpus);
  // GPUs take no request beside the limit; cpu and memory get request = limit (Guaranteed when both are set).
  const requests = Object.fromEntries(Object.entries(limits).filter(([k]) => k !== 'nvidia.com/gpu'));

  const labels: Record<string, string> = { 'app.kubernetes.io/managed-by': 'flywheel', [RUN_ID_LABEL]: runIdHash(req.runId) };
  if (req.campaignId) labels[CAMPAIGN_LABEL] = labelValue(req.campaignId);
  const deadline = o.activeDeadlineSeconds ?? req.timeLimitSeconds;

  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: o.namespace ?? 'default',
      labels,
      annotations: { [RUN_ID_ANNOTATION]: req.runId, 'flywheel.dev/run-dir': req.runDir },
    },
    spec: {
      backoffLimit: 0,
      ...(deadline !== undefined ? { activeDeadlineSeconds: deadline } : {}),
      ttlSecondsAfterFinished: o.ttlSecondsAfterFinished ?? 86_400,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          ...(o.serviceAccount ? { serviceAccountName: o.serviceAccount } : {}),
          ...(o.nodeSelector && Object.keys(o.nodeSelector).length > 0 ? { nodeSelector: o.nodeSelector } : {}),
          ...(o.tolerations && o.tolerations.length > 0 ? { tolerations: o.tolerations } : {}),
          containers: [
            {
              name: CONTAINER,
              image: o.image,
              command: [argv[0]],
              args: argv.slice(1),
              workingDir: runDir,
              env,
              ...(Object.keys(limits).length > 0 ? { resources: { limits, requests } } : {}),
              ...(o.pvcName ? { volumeMounts: [{ name: VOLUME, mountPath: podHome }] } : {}),
            },
          ],
          ...(o.pvcName ? { volumes: [{ name: VOLUME, persistentVolumeClaim: { claimName: o.pvcName } }] } : {}),
        },
      },
    },
  };
}
