// The manifests in backends/kubernetes/deploy and the Job the backend builds, checked without a cluster: each YAML document
// against its kind's OpenAPI schema (kubernetes-models), then for fields the schema would let through unknown
// (the API server's strict field validation refuses them), then the Role against the calls the backend really
// makes (recorded by the API server stand-in in test/helpers/fake-kube-api.ts, which is not a cluster).
import fs from 'node:fs';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { KubernetesBackend } from '../../backends/kubernetes/kubernetes-backend';
import { jobManifest } from '../../backends/kubernetes/job-manifest';
import { scratchDir } from '../helpers/env';
import { FakeKubeApi, type ApiCall } from '../helpers/fake-kube-api';
import { eventually } from '../helpers/loop-harness';
import { uniqueName } from '../helpers/specs';

const DIR = path.join(__dirname, '..', '..', 'backends', 'kubernetes', 'deploy');
const FIXTURE_TRAINER = path.join(__dirname, '..', 'fixtures', 'fixture-trainer.js');

interface Doc {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [k: string]: unknown;
}

const files: { file: string; doc: Doc }[] = fs
  .readdirSync(DIR)
  .filter((f) => /\.ya?ml$/.test(f))
  .flatMap((file) =>
    parseAllDocuments(fs.readFileSync(path.join(DIR, file), 'utf8')).map((d) => {
      if (d.errors.length > 0) throw new Error(`${file}: ${d.errors[0].message}`);
      return { file, doc: d.toJS() as Doc };
    }),
  );
const docs = files.map((f) => f.doc);
const byKind = (kind: string) => docs.filter((d) => d.kind === kind);

/** `new Kind(doc).validate()` from kubernetes-models: throws with the first schema violation's path. */
function validateSchema(doc: object & { apiVersion: string; kind: string }): void {
  const mod = require(`kubernetes-models/${doc.apiVersion}/${doc.kind}`) as Record<string, new (d: unknown) => { validate(): void }>;
  new mod[doc.kind](doc).validate();
}

type ModelClass = { getAttributeTypeMap(): { baseName: string; type: string }[] };
/** Fields the client's typed model of `type` does not know, as JSON paths (the schemas above allow extra fields). */
function unknownFields(value: unknown, type: string, at = ''): string[] {
  const arr = /^Array<(.+)>$/.exec(type);
  if (arr) return Array.isArray(value) ? value.flatMap((v, i) => unknownFields(v, arr[1], `${at}[${i}]`)) : [];
  const cls = (k8s as unknown as Record<string, ModelClass | undefined>)[type];
  if (!cls?.getAttributeTypeMap || value === null || typeof value !== 'object') return [];
  const attrs = new Map(cls.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) =>
    attrs.has(k) ? unknownFields(v, attrs.get(k)!, `${at}.${k}`) : [`${at}.${k}`],
  );
}

test('every document under backends/kubernetes/deploy is valid for its kind, with no unknown field', () => {
  expect(files.map((f) => `${f.file}:${f.doc.kind}`).sort()).toEqual(
    [
      'pvc.yaml:PersistentVolumeClaim',
      'rbac.yaml:Role',
      'rbac.yaml:RoleBinding',
      'rbac.yaml:ServiceAccount',
      'secret.example.yaml:Secret',
      'worker-deployment.yaml:Deployment',
    ].sort(),
  );
  for (const { file, doc } of files) {
    expect(() => validateSchema(doc)).not.toThrow();
    expect({ file, kind: doc.kind, unknown: unknownFields(doc, `V1${doc.kind}`) }).toEqual({ file, kind: doc.kind, unknown: [] });
  }
  // The checks can fail: a typo and a wrong type are caught.
  const [deploy] = byKind('Deployment');
  const typo = structuredClone(deploy) as Doc & { spec: { template: { spec: { containers: Record<string, unknown>[] } } } };
  typo.spec.template.spec.containers[0].comand = ['x'];
  expect(unknownFields(typo, 'V1Deployment')).toEqual(['.spec.template.spec.containers[0].comand']);
  typo.spec.template.spec.containers[0].command = 'npx flywheel worker';
  expect(() => validateSchema(typo)).toThrow(/command must be array/);
});

test('the worker Deployment runs the training worker with the Secret, the service account and the runs PVC', () => {
  const [deploy] = byKind('Deployment') as unknown as k8s.V1Deployment[];
  const pod = deploy.spec!.template.spec!;
  const c = pod.containers[0];
  expect(c.command).toEqual(['npx', 'flywheel', 'worker', '--queue', 'training']);
  const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.valueFrom?.secretKeyRef ?? e.value]));
  const [secret] = byKind('Secret');
  expect(env.TEMPORAL_ADDRESS).toEqual({ name: secret.metadata.name, key: 'TEMPORAL_ADDRESS' });
  expect(env.DATABASE_URL).toEqual({ name: secret.metadata.name, key: 'DATABASE_URL' });
  expect(Object.keys(secret.stringData as object).sort()).toEqual(['DATABASE_URL', 'TEMPORAL_ADDRESS']);
  const [pvc] = byKind('PersistentVolumeClaim');
  const volume = pod.volumes!.find((v) => v.persistentVolumeClaim?.claimName === pvc.metadata.name)!;
  expect(c.volumeMounts).toContainEqual({ name: volume.name, mountPath: env.FLYWHEEL_HOME });
  expect(pod.serviceAccountName).toBe(byKind('ServiceAccount')[0].metadata.name);
  expect(new Set(docs.map((d) => d.metadata.namespace))).toEqual(new Set(['flywheel']));
});

test('the Role grants exactly create/get/list/watch/delete on Jobs and get/list on pods and pods/log, bound to the worker', () => {
  const [role] = byKind('Role') as unknown as k8s.V1Role[];
  expect(role.rules).toEqual([
    { apiGroups: ['batch'], resources: ['jobs'], verbs: ['create', 'get', 'list', 'watch', 'delete'] },
    { apiGroups: [''], resources: ['pods', 'pods/log'], verbs: ['get', 'list'] },
  ]);
  const [binding] = byKind('RoleBinding') as unknown as k8s.V1RoleBinding[];
  const [sa] = byKind('ServiceAccount');
  expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.metadata!.name });
  expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: sa.metadata.name, namespace: sa.metadata.namespace }]);
});

/** The RBAC (apiGroup, resource, verb) an API call needs. */
function permissionOf(call: ApiCall): string {
  const m = /^\/(?:apis\/([^/]+)\/[^/]+|api\/v1)\/namespaces\/[^/]+\/([^/]+)(?:\/([^/]+)(?:\/([^/]+))?)?$/.exec(call.path);
  if (!m) throw new Error(`unmapped call ${call.method} ${call.path}`);
  const [, group = '', resource, name, sub] = m;
  const verb = { POST: 'create', DELETE: 'delete', GET: name ? 'get' : call.query.watch === 'true' ? 'watch' : 'list' }[call.method]!;
  return `${group}:${resource}${sub ? `/${sub}` : ''}:${verb}`;
}

test('every call the backend makes (launch, status, an eviction relaunch, stderrTail, cancel) is granted by the Role', async () => {
  const fake = await new FakeKubeApi().start();
  try {
    const b = new KubernetesBackend({ kubeConfig: fake.kubeConfig(), namespace: 'flywheel', image: 'trainer:test', statusIntervalMs: 0 });
    const runId = `${uniqueName('rbac')}/inner/1/e0/r1`;
    const runDir = path.join(scratchDir('k8s-rbac'), 'runs', runId.replace(/\//g, '_'));
    fs.mkdirSync(runDir, { recursive: true });
    fs.writeFileSync(path.join(runDir, 'run.json'), JSON.stringify({ runId, params: { steps: 600, sleepMs: 600_000 } }));
    const h = await b.launch({ runId, runDir, argv: [process.execPath, FIXTURE_TRAINER, 'train', '--run-dir', runDir] });
    await eventually('the trainer to start', async () => (fs.existsSync(path.join(runDir, 'metrics.jsonl')) ? true : undefined));
    fake.evict('flywheel', h.ref.split('/')[1]);
    await eventually('the relaunch', async () => ((await b.status(h)).reason === 'preempted' ? true : undefined));
    await b.stderrTail(h);
    await b.cancel(h);

    const [role] = byKind('Role') as unknown as k8s.V1Role[];
    const granted = new Set(
      role.rules!.flatMap((r) => r.apiGroups!.flatMap((g) => r.resources!.flatMap((res) => r.verbs.map((v) => `${g}:${res}:${v}`)))),
    );
    const used = new Set(fake.calls.map(permissionOf));
    expect([...used].sort()).toEqual([':pods/log:get', ':pods:list', 'batch:jobs:create', 'batch:jobs:delete', 'batch:jobs:get']);
    for (const p of used) expect(granted).toContain(p);
  } finally {
    await fake.close();
  }
});

test('the Job the backend builds is valid batch/v1, with no unknown field', () => {
  const job = jobManifest(
    {
      image: 'trainer:test',
      namespace: 'flywheel',
      serviceAccount: 'trainer',
      pvcName: 'flywheel-home',
      objectStoreUri: 's3://bucket/runs',
      cpu: 8,
      memory: '32Gi',
      gpus: 8,
      nodeSelector: { 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3' },
      tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
      ttlSecondsAfterFinished: 3600,
    },
    {
      runId: 'c/inner/1/e0/r1',
      runDir: '/flywheel/runs/c_inner_1_e0_r1',
      argv: ['python3', '/app/main.py', 'train', '--run-dir', '/flywheel/runs/c_inner_1_e0_r1'],
      campaignId: 'c',
      timeLimitSeconds: 3600,
    },
    'fw-0123456789ab-c-inner-1-e0-r1',
    1,
  );
  expect(() => validateSchema(job as { apiVersion: string; kind: string })).not.toThrow();
  expect(unknownFields(job, 'V1Job')).toEqual([]);
});
