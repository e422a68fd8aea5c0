// Recipes (issue 37): a recipe folder imported as a deterministic commit of a repository Flywheel owns, pinned by
// registration; every rule a patch must pass, each refusal naming its rule (the compile step inside the trainers'
// sandbox); the same patch checked twice makes the same commit; the patch and commit records; and a launch that runs
// a patched commit's files, read-only, in the sandbox. Real git, real PostgreSQL, real bubblewrap.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { checkPatch, type CheckPatchInput } from '../../activities/recipes/check-patch';
import { launchTraining } from '../../activities/training/launch-training';
import { trainCommand } from '../../activities/training/train-command';
import type { RunJson } from '../../core/job-contract';
import { datasetVersions, experiments } from '../../db/schema';
import type { DbHandle } from '../../db/client';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { experimentCommit, setExperimentCommit } from '../../services/recipes/experiment-commit';
import { importRecipe } from '../../services/recipes/import-recipe';
import { keepCommit, keptCommits, recipeCommitsOf } from '../../services/recipes/recipe-commits';
import { commitDiff, commitParent, recipeFiles } from '../../services/recipes/recipe-files';
import { recordPatch, triedPatches } from '../../services/recipes/recipe-patches';
import { recipeRepoOf } from '../../services/recipes/recipe-repo';
import { parseSpec } from '../../services/task-registry';
import { eventually } from '../helpers/loop-harness';
import { freshDatabase, scratchDir } from '../helpers/env';
import { requires } from '../helpers/requires';
import { uniqueName } from '../helpers/specs';

requires('bubblewrap');

const TRAIN_PY = [
  'import os, sys',
  'run_dir = sys.argv[sys.argv.index("--run-dir") + 1]',
  'with open(os.path.join(run_dir, "out.txt"), "w") as f:',
  '    f.write("base")',
  '',
].join('\n');
const HELPER_PY = 'SCALE = 1\n';

let db: DbHandle;
let home: string;
beforeAll(async () => {
  db = (await freshDatabase('recipes')).handle;
  home = scratchDir('recipes');
});
afterAll(() => db?.close());

function recipeFolder(
  files: Record<string, string> = { 'train.py': TRAIN_PY, 'helper.py': HELPER_PY, 'data/vocab.txt': 'a b c\n' },
): string {
  const dir = path.join(scratchDir('recipe-src'), 'recipe');
  for (const [p, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    fs.writeFileSync(path.join(dir, p), text);
  }
  return dir;
}

/** A git-style unified diff of one file, as a model would write it. */
function diffOf(file: string, before: string, after: string): string {
  const dir = scratchDir('diff');
  fs.writeFileSync(path.join(dir, 'old'), before);
  fs.writeFileSync(path.join(dir, 'new'), after);
  const r = spawnSync('diff', ['-u', '--label', `a/${file}`, '--label', `b/${file}`, 'old', 'new'], { cwd: dir, encoding: 'utf8' });
  return `diff --git a/${file} b/${file}\n${r.stdout}`;
}

const patched = (mark: string) => TRAIN_PY.replace('f.write("base")', `f.write(${JSON.stringify(mark)})`);

async function imported(): Promise<{ campaign: string; base: string; input: Omit<CheckPatchInput, 'diff'> }> {
  const campaign = uniqueName('rc');
  const base = await importRecipe(home, campaign, recipeFolder());
  return { campaign, base, input: { home, campaign, baseCommit: base, mutable: ['train.py'], maxBytes: 20000, tried: [] } };
}

test('an import is deterministic: the same content is the same commit, wherever it lies; a change is a new one; refusals are one line', async () => {
  const campaign = uniqueName('imp');
  const a = await importRecipe(home, campaign, recipeFolder());
  const b = await importRecipe(home, uniqueName('other'), recipeFolder());
  expect(a).toMatch(/^[0-9a-f]{40}$/);
  expect(b).toBe(a);
  expect(await importRecipe(home, campaign, recipeFolder())).toBe(a);
  const changed = await importRecipe(home, campaign, recipeFolder({ 'train.py': TRAIN_PY + '# more\n' }));
  expect(changed).not.toBe(a);
  expect(recipeFiles(home, campaign, a)).toEqual({ 'data/vocab.txt': 'a b c\n', 'helper.py': HELPER_PY, 'train.py': TRAIN_PY });
  expect(commitParent(home, campaign, a)).toBeNull();

  const outside = recipeFolder();
  fs.symlinkSync('/etc/passwd', path.join(outside, 'secret'));
  await expect(importRecipe(home, campaign, outside)).rejects.toThrow(
    /^trainer\.recipe\.path: secret is a symlink to \/etc\/passwd, outside/,
  );
  const escaping = recipeFolder();
  fs.symlinkSync('../../..', path.join(escaping, 'up'));
  await expect(importRecipe(home, campaign, escaping)).rejects.toThrow(/up is a symlink to \.\.\/\.\.\/\.\., outside the recipe folder/);
  const inside = recipeFolder();
  fs.symlinkSync('helper.py', path.join(inside, 'alias.py'));
  await expect(importRecipe(home, campaign, inside)).resolves.toMatch(/^[0-9a-f]{40}$/);
  await expect(importRecipe(home, campaign, recipeFolder(), { fileBytes: 100 })).rejects.toThrow(
    /^trainer\.recipe\.path: train\.py is \d+ bytes, over the 100-byte cap of a recipe file$/,
  );
  await expect(importRecipe(home, campaign, recipeFolder(), { folderBytes: 150 })).rejects.toThrow(/bytes, the cap of a recipe folder$/);
  await expect(importRecipe(home, campaign, path.join(home, 'nowhere'))).rejects.toThrow(/does not exist$/);
});

test("registration pins the folder's commit in the version; an edited folder is a new version; a commit the repository has is kept", async () => {
  const name = uniqueName('pin');
  const folder = recipeFolder();
  const spec = (over: Record<string, unknown> = {}) => ({
    name,
    task: { kind: 'builtin-code', completionItems: 10, lossItems: 5 },
    trainer: { command: ['python3', '{recipe}/train.py'], recipe: { path: folder, mutable: ['train.py'], ...over } },
    searchSpace: { lr: { type: 'categorical', choices: [0.1] } },
  });
  const first = await registerCampaignVersion(db.db, spec(), 'spec.yaml', home);
  const commit = first.spec.trainer.recipe!.commit!;
  expect(commit).toBe(await importRecipe(home, 'x', folder));
  expect((await registerCampaignVersion(db.db, spec(), 'spec.yaml', home)).versionId).toBe(first.versionId);
  fs.appendFileSync(path.join(folder, 'train.py'), '# edited\n');
  const edited = await registerCampaignVersion(db.db, spec(), 'spec.yaml', home);
  expect(edited.versionId).not.toBe(first.versionId);
  // The first commit, named: kept though the folder moved on.
  expect((await registerCampaignVersion(db.db, spec({ commit }), 'spec.yaml', home)).spec.trainer.recipe!.commit).toBe(commit);
  await expect(registerCampaignVersion(db.db, spec({ commit: 'f'.repeat(40) }), 'spec.yaml', home)).rejects.toThrow(
    /^spec\.yaml: trainer\.recipe\.commit f{40} is not in the recipe repository/,
  );
  expect((await recipeCommitsOf(db.db, name)).map((c) => [c.origin, c.parent])).toEqual([
    ['import', null],
    ['import', null],
  ]);
});

test('each rule refuses its patch with one line naming it', async () => {
  const { input, base, campaign } = await imported();
  const good = diffOf('train.py', TRAIN_PY, patched('patched'));
  const reasons = async (diff: string, over: Partial<CheckPatchInput> = {}) => {
    const r = await checkPatch({ ...input, ...over, diff });
    return r.ok ? 'ok' : r.reason;
  };
  expect(await reasons(good, { maxBytes: 50 })).toMatch(/^size: the patch is \d+ bytes, over trainer\.recipe\.maxPatchBytes \(50\)$/);
  expect(await reasons('make it better')).toMatch(/^format: not a unified diff/);
  expect(await reasons(diffOf('helper.py', HELPER_PY, 'SCALE = 2\n'))).toBe(
    'mutable: the patch touches helper.py, which is not in trainer.recipe.mutable',
  );
  expect(
    await reasons(`diff --git a/evil.py b/evil.py\nnew file mode 100644\n--- /dev/null\n+++ b/evil.py\n@@ -0,0 +1 @@\n+print(1)\n`),
  ).toBe('mutable: the patch touches evil.py, which is not in trainer.recipe.mutable');
  // A path that climbs (`x/../helper.py`, or out of the recipe) is not a mutable path as written: refused before git reads it.
  expect(await reasons(`--- a/x/../helper.py\n+++ b/x/../helper.py\n@@ -1 +1 @@\n-SCALE = 1\n+SCALE = 2\n`)).toMatch(/^mutable: /);
  expect(await reasons(`--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-root\n+me\n`)).toMatch(/^mutable: /);
  expect(await reasons(`diff --git a/train.py b/helper2.py\nsimilarity index 100%\nrename from train.py\nrename to helper2.py\n`)).toMatch(
    /^mutable: the patch touches helper2\.py/,
  );
  expect(await reasons(`diff --git a/train.py b/train.py\nold mode 100644\nnew mode 100755\n`)).toBe(
    'mode: the patch sets mode 100755 on train.py; a patch may not change file modes',
  );
  expect(await reasons(`diff --git a/train.py b/train.py\nindex 1..2 100644\nGIT binary patch\nliteral 3\nKcmV+\n`)).toMatch(
    /^binary: train\.py/,
  );
  const tried = [
    { normalizedHash: ((await checkPatch({ ...input, diff: good })) as { normalizedHash: string }).normalizedHash, diff: good },
  ];
  // The same change with other offsets, index line and trailing spaces is the same patch.
  const moved = good
    .replace(/^@@ -1,4 \+1,4 @@/m, '@@ -3,4 +3,4 @@')
    .replace('diff --git a/train.py b/train.py\n', 'diff --git a/train.py b/train.py\nindex 0123456..789abcd 100644\n')
    .replace('f.write("patched")', 'f.write("patched")   ');
  expect(await reasons(moved, { tried })).toMatch(/^duplicate: the same change was tried before \(normalised hash [0-9a-f]{12}\)$/);
  const long = TRAIN_PY + Array.from({ length: 20 }, (_, i) => `x${i} = ${i}`).join('\n') + '\n';
  const base2 = await importRecipe(home, campaign, recipeFolder({ 'train.py': long, 'helper.py': HELPER_PY, 'data/vocab.txt': 'a b c\n' }));
  const first = diffOf('train.py', long, long.replace(/^x(\d+) = /gm, 'y$1 = '));
  const near = diffOf('train.py', long, long.replace(/^x(\d+) = /gm, 'y$1 = ').replace('y19 = 19', 'y19 = 1900'));
  const tried2 = [{ normalizedHash: 'f'.repeat(64), diff: first }];
  expect(await reasons(near, { baseCommit: base2, tried: tried2 })).toMatch(
    /^near-duplicate: 9\d% of its changed lines match a patch tried before/,
  );
  expect(await reasons(diffOf('train.py', TRAIN_PY.replace('base', 'other'), patched('x')))).toMatch(
    new RegExp(`^apply: the patch does not apply to ${base.slice(0, 12)}: patch failed: train\\.py:\\d+$`),
  );
  expect(await reasons(diffOf('train.py', TRAIN_PY, TRAIN_PY.replace('f.write("base")', 'f.write("base"')))).toMatch(
    /^compile: train\.py line 4: SyntaxError: /,
  );
  const linked = recipeFolder();
  fs.symlinkSync('helper.py', path.join(linked, 'link.py'));
  const withLink = await importRecipe(home, campaign, linked);
  const retarget = `diff --git a/link.py b/link.py\n--- a/link.py\n+++ b/link.py\n@@ -1 +1 @@\n-helper.py\n\\ No newline at end of file\n+/etc/passwd\n\\ No newline at end of file\n`;
  expect(await reasons(retarget, { baseCommit: withLink, mutable: ['train.py', 'link.py'] })).toBe(
    'mode: link.py is mode 120000 after the patch; a patch may only change regular files',
  );
  // A section the diff reader cannot split (a space in a name) that git applies all the same (an empty file made
  // outside `mutable`): judged by what git changed, not by the headers read.
  const unsplit = `${good}diff --git a/sitecustomize py b/sitecustomize py\nnew file mode 100644\nindex 0000000..e69de29\n`;
  expect(await reasons(unsplit)).toBe('mutable: applied, the patch changes sitecustomize py, which is not in trainer.recipe.mutable');
  // A patch whose code would read outside at compile time: py_compile does not run it; nothing of FLYWHEEL_HOME shows.
  expect(await reasons(diffOf('train.py', TRAIN_PY, TRAIN_PY + 'open("/etc/shadow").read()\n'))).toBe('ok');
});

test('the same patch checked twice is the same commit on the base; the commit holds the patched file and its diff', async () => {
  const { input, base, campaign } = await imported();
  const diff = diffOf('train.py', TRAIN_PY, patched('patched'));
  const a = await checkPatch({ ...input, diff });
  const b = await checkPatch({ ...input, diff });
  expect(a).toEqual(b);
  if (!a.ok) throw new Error(a.reason);
  expect(a.summary).toBe('train.py +1 -1');
  expect(commitParent(home, campaign, a.commit)).toBe(base);
  expect(recipeFiles(home, campaign, a.commit, ['train.py'])['train.py']).toContain('f.write("patched")');
  expect(commitDiff(home, campaign, a.commit)).toContain('+    f.write("patched")');
  // No ref or index is left behind by a check.
  expect(fs.readdirSync(recipeRepoOf(home, campaign)).filter((f) => f.startsWith('index'))).toEqual([]);
});

test('patches and commits are recorded once; kept commits read newest first; an experiment carries its commit', async () => {
  const campaignId = uniqueName('rec');
  const p = {
    id: `${campaignId}/inner/1/b0/p0`,
    campaignId,
    innerLoopId: `${campaignId}/inner/1`,
    baseCommit: 'a'.repeat(40),
    diff: 'd',
    normalizedHash: 'h1',
    proposer: 'agent:m',
    status: 'rejected' as const,
    reason: 'compile: x',
  };
  expect(await recordPatch(db.db, p)).toBe(true);
  expect(await recordPatch(db.db, { ...p, reason: 'other' })).toBe(false);
  await recordPatch(db.db, {
    ...p,
    id: `${p.id}1`,
    experimentId: `${campaignId}/inner/1/e0`,
    normalizedHash: 'h2',
    status: 'accepted',
    reason: null,
  });
  expect((await triedPatches(db.db, campaignId)).map((t) => [t.normalizedHash, t.status, t.reason])).toEqual([
    ['h1', 'rejected', 'compile: x'],
    ['h2', 'accepted', null],
  ]);
  const k1 = { campaignId, commit: '1'.repeat(40), parent: 'a'.repeat(40), experimentId: 'e1', score: 0.5 };
  await keepCommit(db.db, k1);
  await keepCommit(db.db, { ...k1, score: 0.9 });
  await keepCommit(db.db, { campaignId, commit: '2'.repeat(40), parent: k1.commit, experimentId: 'e2', score: 0.4 });
  expect((await keptCommits(db.db, campaignId)).map((c) => [c.commit[0], c.parent?.[0], c.keptScore])).toEqual([
    ['2', '1', 0.4],
    ['1', 'a', 0.5],
  ]);
  const id = `${campaignId}/inner/1/e0`;
  await db.db.insert(experiments).values({
    id,
    campaignId,
    innerLoopId: `${campaignId}/inner/1`,
    index: 0,
    datasetVersionId: 'd',
    params: {},
    proposer: 'agent',
    status: 'proposed',
  });
  expect(await experimentCommit(db.db, id)).toBeNull();
  await setExperimentCommit(db.db, id, k1.commit);
  expect(await experimentCommit(db.db, id)).toBe(k1.commit);
});

test("a launch runs the experiment's patched commit (else the pinned one) in the sandbox, from a read-only folder", async () => {
  const { input, base, campaign } = await imported();
  const diff = diffOf(
    'train.py',
    TRAIN_PY,
    patched('from the patch').replace(
      'import os, sys',
      'import os, sys\nopen(__file__, "a").write("#")  if os.access(__file__, os.W_OK) else None',
    ),
  );
  const r = await checkPatch({ ...input, diff });
  if (!r.ok) throw new Error(r.reason);
  const spec = parseSpec({
    name: campaign,
    task: { kind: 'builtin-code', completionItems: 10, lossItems: 5 },
    trainer: { command: ['python3', '{recipe}/train.py'], recipe: { path: '/unused', mutable: ['train.py'], commit: base } },
    searchSpace: { lr: { type: 'categorical', choices: [0.1] } },
  });
  const dataset = scratchDir('dataset');
  const run = (commit: string | null): string => {
    const runDir = path.join(home, 'runs', uniqueName('run'));
    fs.mkdirSync(runDir, { recursive: true });
    const runJson = {
      runId: 'r',
      experimentId: 'e',
      recipe: 'custom',
      params: {},
      seed: 1,
      dataset: { versionId: 'd', path: dataset, trainFile: path.join(dataset, 't') },
      baseCheckpoint: null,
      checkpointEvery: 0,
    } as RunJson;
    const cmd = trainCommand(spec, home, runJson, runDir, commit);
    expect(cmd.isolation.sandbox).toBe('bubblewrap');
    const out = spawnSync(cmd.argv[0], cmd.argv.slice(1), { env: cmd.env, encoding: 'utf8' });
    expect(out.stderr).toBe('');
    expect(out.status).toBe(0);
    return fs.readFileSync(path.join(runDir, 'out.txt'), 'utf8');
  };
  expect(run(r.commit)).toBe('from the patch');
  expect(run(null)).toBe('base');
  // The trainer could not append to its own file: the commit's folder is read-only, and still the commit's bytes.
  const tree = path.join(home, 'recipes', `${campaign}.trees`, r.commit);
  expect(fs.readFileSync(path.join(tree, 'train.py'), 'utf8')).toBe(recipeFiles(home, campaign, r.commit)['train.py']);
  expect(execFileSync('find', [tree, '-perm', '/222'], { encoding: 'utf8' })).toBe('');
});

test("launchTraining starts the trainer on the experiment's own recipe commit", async () => {
  const { input, campaign } = await imported();
  const r = await checkPatch({ ...input, diff: diffOf('train.py', TRAIN_PY, patched('launched patch')) });
  if (!r.ok) throw new Error(r.reason);
  const { versionId } = await registerCampaignVersion(
    db.db,
    {
      name: campaign,
      task: { kind: 'builtin-code', completionItems: 10, lossItems: 5 },
      trainer: { command: ['python3', '{recipe}/train.py'], recipe: { path: '/unused', mutable: ['train.py'], commit: input.baseCommit } },
      searchSpace: { lr: { type: 'categorical', choices: [0.1] } },
    },
    'spec.yaml',
    home,
  );
  const dataset = scratchDir('dataset');
  fs.writeFileSync(path.join(dataset, 'train.txt'), 'x\n');
  const datasetVersionId = uniqueName('dv');
  await db.db.insert(datasetVersions).values({ id: datasetVersionId, datasetId: 'd', path: dataset, contentHash: 'h', countsBySource: {} });
  const id = `${campaign}/inner/1/e0`;
  await db.db.insert(experiments).values({
    id,
    campaignId: campaign,
    innerLoopId: `${campaign}/inner/1`,
    campaignVersionId: versionId,
    index: 0,
    datasetVersionId,
    params: { lr: 0.1 },
    proposer: 'agent',
    status: 'proposed',
  });
  await setExperimentCommit(db.db, id, r.commit);
  const { runId } = await launchTraining({ db: db.db, home }, { experimentId: id, attempt: 1 });
  const out = path.join(home, 'runs', runId.replace(/[^A-Za-z0-9._-]+/g, '_'), 'out.txt');
  expect(await eventually("the trainer's out.txt", async () => (fs.existsSync(out) ? fs.readFileSync(out, 'utf8') : undefined))).toBe(
    'launched patch',
  );
});
