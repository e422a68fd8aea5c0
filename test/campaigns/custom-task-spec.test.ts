// A custom task's campaign spec: `task: {kind: custom, dataset, suite}` with bare names pinned to the newest versions
// when the campaign version is registered (the stored spec and its hash hold the exact ids), unknown names refused in
// one line with nothing written, prepareTask handing over the pinned versions, and a metric name the suite does not
// report refused by `flywheel validate` and by the inner loop's settings, listing the valid names. The dataset is made
// with direct inserts (rows as `flywheel dataset add` writes them).
import fs from 'node:fs';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import YAML from 'yaml';
import { loopSettings } from '../../activities/task/loop-settings';
import { prepareTask } from '../../activities/task/prepare-task';
import { NotFoundError, UsageError } from '../../core/errors';
import type { CampaignSpecInput } from '../../core/spec';
import type { DbHandle } from '../../db/client';
import { campaignVersions, datasets, datasetVersions, evalSuites } from '../../db/schema';
import { loadCampaignVersion, registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { registerEvalSuite } from '../../services/suites/register-suite';
import { cliEnv, runCli } from '../helpers/cli';
import { freshDatabase, scratchDir } from '../helpers/env';

let h: DbHandle;
let env: NodeJS.ProcessEnv;
const home = scratchDir('custom-task-spec');
const OLD = 'sums@aaaaaaaaaaaa';
const NEWEST = 'sums@bbbbbbbbbbbb';
const DERIVED = 'sums@cccccccccccc';

const suite = (items: object[]) => ({
  name: 'sumsuite',
  items: [
    { id: 'p1', split: 'public', grader: { kind: 'exact_match' }, category: 'carry', prompt: '17 + 25 =', reference: '42' },
    {
      id: 'p2',
      split: 'public',
      grader: { kind: 'numeric_tolerance', absolute: 0.5 },
      category: 'no-carry',
      prompt: '11 + 22 =',
      reference: '33',
    },
    { id: 'h1', split: 'heldout', grader: { kind: 'exact_match' }, category: 'carry', prompt: '18 + 24 =', reference: '42' },
    ...items,
  ],
});

const spec = (name: string, task: object, over: Record<string, unknown> = {}): CampaignSpecInput =>
  ({ name, task, searchSpace: { lr: { type: 'float', low: 0.1, high: 1 } }, ...over }) as CampaignSpecInput;

beforeAll(async () => {
  const db = await freshDatabase('custom_task_spec');
  h = db.handle;
  env = cliEnv({ dbUrl: db.url, home }, 'custom-task-');
  // A dataset registered twice (two base versions), and a version the outer loop derived from it, newer still.
  await h.db.insert(datasets).values({ id: 'sums', name: 'sums', campaignId: null });
  const version = (id: string, parentIds: string[], at: string) => ({
    id,
    datasetId: 'sums',
    parentIds,
    path: path.join(home, 'datasets', id),
    contentHash: id.slice(-12),
    countsBySource: { user: 2 },
    createdAt: new Date(at),
  });
  await h.db
    .insert(datasetVersions)
    .values([
      version(OLD, [], '2024-01-01T00:00:00Z'),
      version(NEWEST, [], '2024-02-01T00:00:00Z'),
      version(DERIVED, [NEWEST], '2024-03-01T00:00:00Z'),
    ]);
  expect((await registerEvalSuite(h.db, suite([]))).suiteId).toBe('sumsuite@1');
  expect(
    (
      await registerEvalSuite(
        h.db,
        suite([{ id: 'p3', split: 'public', grader: { kind: 'exact_match' }, prompt: '1 + 1 =', reference: '2' }]),
      )
    ).suiteId,
  ).toBe('sumsuite@2');
});
afterAll(async () => h?.close());

describe('pinning at registration', () => {
  test('bare names pin the newest base dataset version and the highest suite version; the stored spec and hash hold them', async () => {
    const bare = await registerCampaignVersion(h.db, spec('pinned', { kind: 'custom', dataset: 'sums', suite: 'sumsuite' }));
    expect(bare.spec.task).toEqual({ kind: 'custom', dataset: NEWEST, suite: 'sumsuite@2' });
    const stored = await loadCampaignVersion(h.db, bare.versionId);
    expect(stored.spec.task).toEqual({ kind: 'custom', dataset: NEWEST, suite: 'sumsuite@2' });
    // Naming the same versions explicitly is the same campaign version.
    const explicit = await registerCampaignVersion(h.db, spec('pinned', { kind: 'custom', dataset: NEWEST, suite: 'sumsuite@2' }));
    expect(explicit).toMatchObject({ versionId: bare.versionId, created: false });
    // An older version named exactly stays as named.
    const old = await registerCampaignVersion(h.db, spec('pinned', { kind: 'custom', dataset: OLD, suite: 'sumsuite@1' }));
    expect(old.spec.task).toEqual({ kind: 'custom', dataset: OLD, suite: 'sumsuite@1' });
    expect(old.versionId).not.toBe(bare.versionId);
  });

  test('an unknown dataset, suite or version is one line naming it, and nothing is written', async () => {
    const before = (await h.db.select({ n: sql<number>`count(*)::int` }).from(campaignVersions))[0].n;
    const refusal = async (task: object) => {
      const err = await registerCampaignVersion(h.db, spec('unknown', task), 'u.yaml').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UsageError);
      expect((err as Error).message).not.toContain('\n');
      return (err as Error).message;
    };
    expect(await refusal({ kind: 'custom', dataset: 'x', suite: 'sumsuite' })).toBe(
      'u.yaml: task.dataset: dataset "x" is not registered (flywheel dataset add x FILE.jsonl)',
    );
    expect(await refusal({ kind: 'custom', dataset: 'sums@0123456789ab', suite: 'sumsuite' })).toBe(
      'u.yaml: task.dataset: dataset version "sums@0123456789ab" is not registered (flywheel dataset show sums lists its versions)',
    );
    expect(await refusal({ kind: 'custom', dataset: 'sums', suite: 'nosuite' })).toBe(
      'u.yaml: task.suite: suite "nosuite" is not registered (flywheel suite add FILE.json)',
    );
    expect(await refusal({ kind: 'custom', dataset: 'sums', suite: 'sumsuite@9' })).toMatch(
      /^u\.yaml: task\.suite: suite version "sumsuite@9" is not registered/,
    );
    expect((await h.db.select({ n: sql<number>`count(*)::int` }).from(campaignVersions))[0].n).toBe(before);
  });
});

describe('prepareTask for a custom task', () => {
  test('hands over the pinned dataset version and suite (or the dataset version asked for), and refuses vanished ones', async () => {
    const { versionId } = await registerCampaignVersion(h.db, spec('prepared', { kind: 'custom', dataset: 'sums', suite: 'sumsuite@1' }));
    const deps = { db: h.db, home };
    expect(await prepareTask(deps, { campaignVersionId: versionId })).toEqual({ datasetVersionId: NEWEST, suiteId: 'sumsuite@1' });
    expect(await prepareTask(deps, { campaignVersionId: versionId, datasetVersionId: DERIVED })).toEqual({
      datasetVersionId: DERIVED,
      suiteId: 'sumsuite@1',
    });
    await expect(prepareTask(deps, { campaignVersionId: versionId, datasetVersionId: 'sums@ffffffffffff' })).rejects.toThrow(NotFoundError);

    const { versionId: gone } = await registerCampaignVersion(
      h.db,
      spec('vanished', { kind: 'custom', dataset: OLD, suite: 'sumsuite@1' }),
    );
    await h.db.delete(datasetVersions).where(eq(datasetVersions.id, OLD));
    await expect(prepareTask(deps, { campaignVersionId: gone })).rejects.toThrow(/dataset version "sums@aaaaaaaaaaaa" is not registered/);
    await expect(prepareTask(deps, { campaignVersionId: gone })).rejects.toBeInstanceOf(NotFoundError);
    await h.db.insert(evalSuites).values({ id: 'ghost@1', name: 'ghost', version: 1, contentHash: 'x' });
    const { versionId: ghost } = await registerCampaignVersion(h.db, spec('ghost', { kind: 'custom', dataset: NEWEST, suite: 'ghost@1' }));
    await h.db.delete(evalSuites).where(eq(evalSuites.id, 'ghost@1'));
    await expect(prepareTask(deps, { campaignVersionId: ghost })).rejects.toThrow(/suite "ghost" is not registered/);
  });
});

describe('metric names the suite does not report', () => {
  const VALID =
    'valid: pass_rate, accuracy, category.carry, category.general, category.no-carry, grader.exact_match, grader.numeric_tolerance';

  test("the inner loop's settings refuse them, listing the valid names; a reported one is selected with its direction", async () => {
    const deps = { db: h.db, home };
    const good = await registerCampaignVersion(
      h.db,
      spec('metric-ok', { kind: 'custom', dataset: 'sums', suite: 'sumsuite' }, { selection: { metric: 'category.carry' } }),
    );
    expect((await loopSettings(deps, { campaignVersionId: good.versionId })).selection).toEqual({ metric: 'category.carry', mode: 'max' });
    const bad = await registerCampaignVersion(
      h.db,
      spec('metric-bad', { kind: 'custom', dataset: 'sums', suite: 'sumsuite' }, { selection: { metric: 'bits_per_byte' } }),
    );
    const err = await loopSettings(deps, { campaignVersionId: bad.versionId }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toContain(`selection.metric: "bits_per_byte" is not a metric suite "sumsuite@2" reports; ${VALID}`);
  });

  const validate = (name: string, s: unknown) => {
    const file = path.join(home, `${name}.yaml`);
    fs.writeFileSync(file, YAML.stringify(s));
    return runCli(env, ['validate', file]);
  };

  test('`flywheel validate` refuses a metric the suite does not report, in one line listing the valid names', async () => {
    const r = await validate('foo', spec('foo', { kind: 'custom', dataset: 'sums', suite: 'sumsuite' }, { selection: { metric: 'foo' } }));
    expect(r.status).toBe(2);
    expect(r.stdout).toBe(`selection.metric: "foo" is not a metric suite "sumsuite@2" reports; ${VALID}\n`);

    const gate = await validate(
      'gate',
      spec('gate', { kind: 'custom', dataset: 'sums', suite: 'sumsuite@1' }, { outerLoop: { promotion: { metric: 'exact_match' } } }),
    );
    expect(gate.status).toBe(2);
    expect(gate.stdout).toMatch(
      /^outerLoop\.promotion\.metric: "exact_match" is not a metric suite "sumsuite@1" reports; valid: pass_rate/,
    );

    const ok = await validate(
      'ok',
      spec('ok', { kind: 'custom', dataset: 'sums', suite: 'sumsuite' }, { selection: { metric: 'grader.numeric_tolerance' } }),
    );
    expect(ok).toMatchObject({ status: 0, stdout: 'ok\n' });

    const unknown = await validate('nods', spec('nods', { kind: 'custom', dataset: 'nods', suite: 'sumsuite' }));
    expect(unknown.status).toBe(2);
    expect(unknown.stdout).toMatch(/task\.dataset: dataset "nods" is not registered \(flywheel dataset add nods FILE\.jsonl\)\n$/);
  });

  test("the built-in task's names are known without a suite: a wrong one is refused with them listed", async () => {
    const r = await validate('builtin', spec('builtin', { kind: 'builtin-code' }, { selection: { metric: 'category.typescript' } }));
    expect(r.status).toBe(2);
    expect(r.stdout).toMatch(
      /^selection\.metric: "category\.typescript" is not a metric suite "builtin-code" reports; valid: pass_rate, accuracy, exact_match, bits_per_byte, category\.identifier/,
    );
    const ok = await validate('builtin-ok', spec('builtin-ok', { kind: 'builtin-code' }, { selection: { metric: 'category.identifier' } }));
    expect(ok).toMatchObject({ status: 0, stdout: 'ok\n' });
  });
});
