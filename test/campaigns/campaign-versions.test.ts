// Campaign versions: a spec is registered as an immutable `<name>@<hash>` version, a loop and its experiments pin
// the version they run, and an edited spec (a new version) never reaches a running loop. A spec too large is refused
// with one line before anything is written or any workflow started, whichever command registers it.
import fs from 'node:fs';
import path from 'node:path';
import { eq, inArray, sql } from 'drizzle-orm';
import YAML from 'yaml';
import type { CampaignSpecInput } from '../../core/spec';
import { campaigns, campaignVersions, experiments, innerLoops } from '../../db/schema';
import { latestInnerLoop, latestOuterLoop } from '../../services/campaign-loops';
import {
  canonicalJson,
  campaignVersionOf,
  listCampaignVersions,
  registerCampaignVersion,
} from '../../services/campaigns/campaign-versions';
import { diffSpecs, formatChange } from '../../services/campaigns/spec-diff';
import { runDirOf } from '../../services/paths';
import { cliEnv, runCli } from '../helpers/cli';
import { eventually, loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { fixtureSpec, uniqueName } from '../helpers/specs';

let h: LoopHarness;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  h = await loopHarness('versions');
  const w = await h.workers('t-versions');
  env = cliEnv(h, w.prefix);
});
afterAll(() => h?.close());

const cli = (args: string[]) => runCli(env, args);
function writeSpec(spec: unknown, text?: string): string {
  const file = path.join(h.home, `${uniqueName('spec')}.yaml`);
  fs.writeFileSync(file, text ?? YAML.stringify(spec));
  return file;
}

/** A fixture-trainer campaign: `marker` rides in trainer.fixed (so in every run.json); each run lasts `sleepMs`. */
function versioned(name: string, o: { marker: string; steps: number; experiments: number; sleepMs?: number }): CampaignSpecInput {
  const s = fixtureSpec(
    name,
    { steps: o.steps, sleepMs: o.sleepMs ?? 1500 },
    { budget: { experiments: o.experiments, parallelism: 1 }, batchSize: 1, startupTrials: 0 },
  );
  return { ...s, trainer: { ...s.trainer, fixed: { marker: o.marker } } } as CampaignSpecInput;
}

test('the same spec is the same version, whatever its key order; an edited spec is a new one; a diff names each change', async () => {
  const name = uniqueName('same');
  const spec = versioned(name, { marker: 'a', steps: 3, experiments: 1 });
  const first = await registerCampaignVersion(h.db.db, spec);
  const reordered = Object.fromEntries(Object.entries(spec).reverse());
  const again = await registerCampaignVersion(h.db.db, reordered);
  expect(first.versionId).toMatch(new RegExp(`^${name}@[0-9a-f]{12}$`));
  expect(first.created).toBe(true);
  expect(again).toMatchObject({ versionId: first.versionId, created: false });
  expect(canonicalJson({ b: 1, a: { d: 2, c: 3 } })).toBe('{"a":{"c":3,"d":2},"b":1}');

  const edited = await registerCampaignVersion(h.db.db, versioned(name, { marker: 'b', steps: 3, experiments: 1 }));
  expect(edited.created).toBe(true);
  expect(edited.versionId).not.toBe(first.versionId);
  const [row] = await h.db.db.select().from(campaigns).where(eq(campaigns.id, name));
  expect(row.latestVersionId).toBe(edited.versionId);
  expect((await listCampaignVersions(h.db.db, name)).map((v) => [v.id, v.latest])).toEqual([
    [edited.versionId, true],
    [first.versionId, false],
  ]);
  expect(diffSpecs(first.spec, edited.spec).map(formatChange)).toEqual(['trainer.fixed.marker: "a" → "b"']);
});

test('an edited spec run mid-loop leaves the running loop its trainer, space and budget; the next run uses the new version', async () => {
  const name = uniqueName('midrun');
  // A's runs last 8 s, so its second experiment is proposed and launched well after B is registered.
  const a = versioned(name, { marker: 'A', steps: 3, experiments: 2, sleepMs: 8000 });
  const b = versioned(name, { marker: 'B', steps: 7, experiments: 3 });
  const loopA = `${name}/inner/a`;
  const loopB = `${name}/inner/b`;

  const startA = await cli(['run', writeSpec(a), '--id', loopA, '--detach']);
  expect(startA.status).toBe(0);
  const versionA = /campaign (\S+@[0-9a-f]{12}) \(new\)/.exec(startA.stderr)?.[1];
  expect(versionA).toBeDefined();
  // Mid-run: the first experiment is training, one more is still to be proposed and launched.
  await eventually(
    'loop A training its first experiment',
    async () => {
      const [r] = await h.db.db
        .select()
        .from(experiments)
        .where(sql`${experiments.id} = ${`${loopA}/e0`} AND ${experiments.status} = 'running'`);
      return r;
    },
    120_000,
  );
  const startB = await cli(['run', writeSpec(b), '--id', loopB, '--detach']);
  expect(startB.status).toBe(0);
  const versionB = /campaign (\S+@[0-9a-f]{12}) \(new\)/.exec(startB.stderr)?.[1];
  expect(versionB).toBeDefined();
  expect(versionB).not.toBe(versionA);
  expect((await h.client.workflow.getHandle(loopA).describe()).status.name).toBe('RUNNING');
  // B is under way (its loop row is written once its spec is stored), and A has yet to propose its second experiment.
  await eventually('loop B to start', async () => (await h.db.db.select().from(innerLoops).where(eq(innerLoops.id, loopB)))[0], 60_000);
  expect(
    await h.db.db
      .select()
      .from(experiments)
      .where(eq(experiments.id, `${loopA}/e1`)),
  ).toEqual([]);
  // The inputs carry the version id only.
  const [startedA] = (await h.client.workflow.getHandle(loopA).fetchHistory()).events!;
  expect(JSON.stringify(startedA)).not.toContain('marker');

  const resultA = await h.client.workflow.getHandle(loopA).result();
  const resultB = await h.client.workflow.getHandle(loopB).result();
  // Budget: A keeps its 2 experiments, B runs its 3.
  expect(resultA.experiments).toBe(2);
  expect(resultB.experiments).toBe(3);

  const rows = await h.db.db
    .select()
    .from(experiments)
    .where(inArray(experiments.innerLoopId, [loopA, loopB]));
  const of = (loop: string) => rows.filter((r) => r.innerLoopId === loop && r.proposer !== 'baseline');
  // Space: every experiment of A drew from A's space (steps 3), every one of B from B's (steps 7).
  expect(of(loopA).map((r) => r.params.steps)).toEqual([3, 3]);
  expect(of(loopB).map((r) => r.params.steps)).toEqual([7, 7, 7]);
  // Trainer: each run.json has its loop's fixed params, including A's runs launched after B was registered.
  const markerOf = (experimentId: string) =>
    (JSON.parse(fs.readFileSync(path.join(runDirOf(h.home, `${experimentId}/r1`), 'run.json'), 'utf8')) as { params: { marker: string } })
      .params.marker;
  expect(of(loopA).map((r) => markerOf(r.id))).toEqual(['A', 'A']);
  expect(of(loopB).map((r) => markerOf(r.id))).toEqual(['B', 'B', 'B']);
  // Every row pins its version.
  expect(new Set(rows.filter((r) => r.innerLoopId === loopA).map((r) => r.campaignVersionId))).toEqual(new Set([versionA]));
  expect(new Set(rows.filter((r) => r.innerLoopId === loopB).map((r) => r.campaignVersionId))).toEqual(new Set([versionB]));
  const loops = await h.db.db
    .select({ id: innerLoops.id, v: innerLoops.campaignVersionId })
    .from(innerLoops)
    .where(eq(innerLoops.campaignId, name));
  expect(Object.fromEntries(loops.map((l) => [l.id, l.v]))).toEqual({ [loopA]: versionA, [loopB]: versionB });

  // `flywheel campaign versions` and `diff` show them.
  const versions = await cli(['campaign', 'versions', name]);
  expect(versions.status).toBe(0);
  const lines = versions.stdout.trim().split('\n');
  expect(lines[0]).toMatch(/^version\s+created \(UTC\)\s+latest\s+inner loops\s+outer iterations$/);
  expect(lines[1]).toMatch(new RegExp(`^${versionB}\\s+\\S+ \\S+\\s+yes\\s+${loopB}\\s+–$`));
  expect(lines[2]).toMatch(new RegExp(`^${versionA}\\s+\\S+ \\S+\\s+${loopA}\\s+–$`));
  const diff = await cli(['campaign', 'diff', versionA!, name]);
  expect(diff.status).toBe(0);
  expect(diff.stdout.trim().split('\n')).toEqual([
    `--- ${versionA}`,
    `+++ ${versionB}`,
    'innerLoop.budget.experiments: 2 → 3',
    'searchSpace.sleepMs.choices: [8000] → [1500]',
    'searchSpace.steps.choices: [3] → [7]',
    'trainer.fixed.marker: "A" → "B"',
  ]);
  for (const args of [
    ['campaign', 'diff', `${name}@000000000000`, versionA!],
    ['campaign', 'versions', uniqueName('nobody')],
  ]) {
    const unknown = await cli(args);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^flywheel: unknown campaign/)]);
  }
}, 300_000);

test('a 5 MB spec is refused with one line, exit 2, before anything is written or reaches Temporal: by every command that registers one', async () => {
  const name = uniqueName('huge');
  const counts = async () => ({
    campaigns: (await h.db.db.select({ n: sql<number>`count(*)::int` }).from(campaigns))[0].n,
    versions: (await h.db.db.select({ n: sql<number>`count(*)::int` }).from(campaignVersions))[0].n,
  });
  const before = await counts();

  // 5 MB on disk: refused by the spec file's size cap.
  const bigFile = writeSpec(
    undefined,
    `name: ${name}\nsearchSpace:\n  x: { type: categorical, choices: [1] }\ntrainer:\n  fixed:\n    blob: "${'x'.repeat(5 << 20)}"\n`,
  );
  // 5 MB once its YAML aliases expand, from a 100 KiB file: refused by the registration's cap.
  const expanding = writeSpec(
    undefined,
    [
      `name: ${name}`,
      'searchSpace:',
      '  x: { type: categorical, choices: [1] }',
      'trainer:',
      '  fixed:',
      `    blob0: &blob "${'y'.repeat(100 << 10)}"`,
      ...Array.from({ length: 50 }, (_, i) => `    blob${i + 1}: *blob`),
      '',
    ].join('\n'),
  );
  expect(fs.statSync(expanding).size).toBeLessThan(256 << 10);
  const cases: [string[], RegExp][] = [
    [['run', bigFile, '--detach'], /bytes, more than a campaign spec may be \(256 KiB\)$/],
    [['run', expanding, '--detach'], /"[a-z0-9-]+": 5\.\d MB as JSON, more than a campaign spec may be \(256 KiB\)$/],
    [['outer', name, '--spec', expanding, '--detach'], /5\.\d MB as JSON, more than a campaign spec may be/],
    [['schedule', 'create', name, '--every', '1d', '--spec', expanding], /5\.\d MB as JSON, more than a campaign spec may be/],
  ];
  for (const [args, why] of cases) {
    const r = await cli(args);
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(why)]);
  }
  expect(await counts()).toEqual(before);
  expect(await latestInnerLoop(h.client, name)).toBeUndefined();
  expect(await latestOuterLoop(h.client, name)).toBeUndefined();
  await expect(h.client.schedule.getHandle(`${name}/outer`).describe()).rejects.toThrow();

  // Any other caller (a script, the dashboard, a test) registers through the same service, and gets the same refusal;
  // a workflow input carries the version id only.
  const huge = { ...fixtureSpec(name, { steps: 1 }), trainer: { command: 'builtin', fixed: { blob: 'z'.repeat(5 << 20) } } };
  expect(() => campaignVersionOf(huge)).toThrow(
    /^campaign spec "[a-z0-9-]+": 5\.\d MB as JSON, more than a campaign spec may be \(256 KiB\)$/,
  );
  await expect(registerCampaignVersion(h.db.db, huge)).rejects.toMatchObject({ name: 'SpecTooLargeError' });
  expect(await counts()).toEqual(before);
}, 180_000);
