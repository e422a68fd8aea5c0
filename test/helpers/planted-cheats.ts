// The planted-cheats bench and test share this: the built-in suite with its probes, a production checkpoint, and for
// each recipe a campaign whose trainer is that recipe (test/fixtures/cheats), scored and gated by the real activities.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from '../../activities/training/trainer-command';
import { sandboxAvailable } from './sandbox';
import { MockActivityEnvironment } from '@temporalio/testing';
import { and, eq } from 'drizzle-orm';
import { prepareTask } from '../../activities/task/prepare-task';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import type { ActivityDeps } from '../../activities/deps';
import { readHeldoutItems } from '../../activities/eval/heldout-items';
import { scoreCheckpoint } from '../../activities/eval/score-checkpoint';
import type { EvalSplit } from '../../contracts/eval';
import { evaluateGate } from '../../activities/outer/evaluate-gate';
import type { GateSummary } from '../../contracts/outer-activities';
import type { GateSettingsInput } from '../../core/gate/settings';
import { MANIFEST_FILE, RUN_JSON, type CheckpointManifest, type RunJson } from '../../core/job-contract';
import type { Db } from '../../db/client';
import { checkpoints, datasets, datasetVersions, evalItems, examples, experiments } from '../../db/schema';
import { gateDecisionById, type GateFigures } from '../../services/decisions';
import { trainCheckpoint } from './charlm-checkpoint';
import { fastBuiltinSpec } from './specs';

const CHEATS = path.join(__dirname, '..', 'fixtures', 'cheats', 'main.ts');
const RUN_TS = path.join(__dirname, '..', '..', 'bin', 'run-ts.js');

export type OutputRecipe = 'honest' | 'memorise' | 'tamper' | 'heldout-train' | 'heldout-memorise' | 'grader-escape';

/** The small model the planted cheats train (test/helpers/charlm-checkpoint.ts's shape). */
export const CHEAT_TRAIN_PARAMS = { context: 4, embed: 8, hidden: 32, batchSize: 16, lr: 0.02, logEvery: 50 };

export interface PlantedCheats {
  suiteId: string;
  baseVersionId: string;
  /** The base version's training text. */
  trainText: string;
  /** The leak file every recipe is given: the public and held-out items' text. */
  leakFile: string;
  /**
   * The spec's trainer block for `recipe`: its argv, and the checkout and the leak's folder as the paths its sandbox
   * may read (the leak is given on purpose; FLYWHEEL_HOME stays hidden).
   */
  trainer(recipe: OutputRecipe): { command: string[]; readOnlyPaths: string[]; unsandboxed: boolean };
  /**
   * A production checkpoint (a short honest run) for `tag`, scored on every split. `params`: the recipe its experiment
   * row records, which the gate's seed reruns retrain (activities/outer/plan-seed-reruns.ts). @default {}
   */
  production(tag: string, seed: number, params?: Record<string, number>): Promise<string>;
  /** A campaign `${prefix}-${recipe}${tag}` whose trainer is `recipe`, holding `file` as its candidate. */
  candidate(recipe: OutputRecipe, tag: string, file: { path: string; sha256: string }): Promise<string>;
  /** Scores a checkpoint on every split (public, held-out, probe), as the outer loop does before its gate. */
  score(checkpointId: string): Promise<void>;
  /**
   * Scores both checkpoints on every split and gates the candidate; the decision row's checks. `seedReruns`: scored
   * checkpoints of seed reruns, whose held-out spread is the gate's σ_seed.
   */
  gate(
    recipe: OutputRecipe,
    tag: string,
    candidate: string,
    incumbent: string,
    settings?: GateSettingsInput,
    seedReruns?: string[],
  ): Promise<{ summary: GateSummary; checks: NonNullable<GateFigures['checks']> }>;
  /**
   * Runs `recipe`'s own `train` entry as a trainer is run (a child process on a run directory whose run.json names
   * the base dataset version), for `steps`; the checkpoint it wrote. `heldout-train` reads the leak file it is given.
   */
  train(recipe: OutputRecipe, tag: string, opts: { steps: number; seed: number }): Promise<{ path: string; sha256: string }>;
  /** A dataset version: the base examples plus `extra` (source `cheat`). */
  versionWith(label: string, extra: { ref: string; content: string }[]): Promise<string>;
  publicItems(): Promise<{ prompt: string; reference: string }[]>;
}

const run = <A extends unknown[], R>(fn: (...a: A) => Promise<R>, ...args: A): Promise<R> =>
  new MockActivityEnvironment({ heartbeatTimeoutMs: 60_000 }).run(fn, ...args);

export async function plantedCheats(db: Db, home: string, prefix: string): Promise<PlantedCheats> {
  const deps: ActivityDeps = { db, home };
  // Beside FLYWHEEL_HOME, not in it: the sandbox hides FLYWHEEL_HOME from the cheat, and the leak is given on purpose.
  const leakDir = `${home}-leak`;
  fs.mkdirSync(leakDir, { recursive: true });
  const leakFile = path.join(leakDir, 'leak.json');
  const prod = `${prefix}-production`;
  const { versionId: prodVersionId } = await registerCampaignVersion(db, fastBuiltinSpec(prod));
  const { suiteId, datasetVersionId: baseVersionId } = await prepareTask(deps, { campaignVersionId: prodVersionId });
  const publicItems = async () =>
    db
      .select({ prompt: evalItems.prompt, reference: evalItems.reference })
      .from(evalItems)
      .where(and(eq(evalItems.suiteId, suiteId), eq(evalItems.split, 'public')));
  // What a leak of the public split, and of the held-out one, gives a cheater. The held-out read is logged as what it
  // is: the simulated leak channel (a database read, a copy of the held-out files, an export: the same text).
  const heldout = (await readHeldoutItems(db, suiteId, `plantedCheats:${prefix}`, 'simulated-leak')).map((i) => ({
    prompt: i.prompt,
    reference: i.reference,
  }));
  fs.writeFileSync(leakFile, JSON.stringify({ public: await publicItems(), heldout }));
  const [version] = await db.select().from(datasetVersions).where(eq(datasetVersions.id, baseVersionId));
  const trainText = fs.readFileSync(path.join(version.path, 'train.txt'), 'utf8');
  const scoreAll = async (checkpointId: string) => {
    for (const split of ['public', 'heldout', 'probe'] as EvalSplit[])
      await run(scoreCheckpoint, deps, { checkpointId, suiteId, split, purpose: 'gate' });
  };
  // A checkout whose node_modules is a link elsewhere (a git worktree sharing another checkout's) needs that folder too.
  const modules = fs.realpathSync(path.join(REPO, 'node_modules'));
  const cheatTrainer = (recipe: OutputRecipe) => ({
    command: [process.execPath, RUN_TS, CHEATS, recipe, leakFile],
    readOnlyPaths: [REPO, ...(modules.startsWith(REPO + path.sep) ? [] : [modules]), leakDir],
    unsandboxed: !sandboxAvailable,
  });
  return {
    suiteId,
    baseVersionId,
    trainText,
    leakFile,
    trainer: cheatTrainer,
    publicItems,
    async production(tag, seed, params = {}) {
      const experimentId = `${prod}/e${tag}`;
      await db.insert(experiments).values({
        id: experimentId,
        campaignId: prod,
        campaignVersionId: prodVersionId,
        innerLoopId: `${prod}/inner`,
        index: 0,
        datasetVersionId: baseVersionId,
        params,
        proposer: 'test',
        status: 'succeeded',
      });
      const id = (
        await trainCheckpoint({ dir: home, id: `${experimentId}/r1/step-20`, text: trainText, seed, steps: 20, db, experimentId })
      ).id;
      await scoreAll(id);
      return id;
    },
    async candidate(recipe, tag, file) {
      const campaignId = `${prefix}-${recipe}${tag}`;
      const { versionId: campaignVersionId } = await registerCampaignVersion(
        db,
        fastBuiltinSpec(campaignId, { trainer: cheatTrainer(recipe) } as never),
      );
      const experimentId = `${campaignId}/e1`;
      await db.insert(experiments).values({
        id: experimentId,
        campaignId,
        campaignVersionId,
        innerLoopId: `${campaignId}/inner`,
        index: 1,
        datasetVersionId: baseVersionId,
        params: { recipe },
        proposer: 'test',
        status: 'succeeded',
      });
      const id = `${experimentId}/r1/step-300`;
      await db
        .insert(checkpoints)
        .values({ id, runId: `${experimentId}/r1`, experimentId, step: 300, path: file.path, sha256: file.sha256, format: 'charlm-v1' });
      return id;
    },
    async train(recipe, tag, { steps, seed }) {
      const runDir = path.join(home, 'runs', `${recipe}${tag}`);
      fs.mkdirSync(runDir, { recursive: true });
      const run: RunJson = {
        runId: `${prefix}-${recipe}${tag}/e1/r1`,
        experimentId: `${prefix}-${recipe}${tag}/e1`,
        recipe,
        params: { ...CHEAT_TRAIN_PARAMS, steps },
        seed,
        dataset: { versionId: baseVersionId, path: version.path, trainFile: 'train.txt' },
        baseCheckpoint: null,
        checkpointEvery: 0,
      };
      fs.writeFileSync(path.join(runDir, RUN_JSON), JSON.stringify(run));
      await new Promise<void>((resolve, reject) =>
        execFile(
          process.execPath,
          [RUN_TS, CHEATS, recipe, leakFile, 'train', '--run-dir', runDir],
          { timeout: 600_000 },
          (err, _out, stderr) => (err ? reject(new Error(`${recipe} train: ${stderr || err.message}`)) : resolve()),
        ),
      );
      const manifest = JSON.parse(fs.readFileSync(path.join(runDir, MANIFEST_FILE), 'utf8')) as CheckpointManifest;
      const last = manifest.checkpoints.at(-1)!;
      return { path: path.resolve(runDir, last.path), sha256: last.sha256 };
    },
    score: scoreAll,
    async gate(recipe, tag, candidate, incumbent, settings, seedReruns) {
      await scoreAll(candidate);
      const decisionId = `${prefix}-${recipe}${tag}/outer/i1/gate`;
      const summary = await evaluateGate(db, {
        decisionId,
        campaignId: `${prefix}-${recipe}${tag}`,
        candidateCheckpointId: candidate,
        incumbentCheckpointId: incumbent,
        suiteId,
        // Items alone unless a caller says otherwise: the planted cheats are judged by the item-level statistics their
        // bounds were set on. The task's default clusters by source (the fast suite's 20 held-out loss items now come
        // from 13 files), which the gate's unit tests and test/outer/outer-loop.test.ts exercise.
        settings: { clusterBy: 'item', ...settings },
        ...(seedReruns ? { seedRerunCheckpointIds: seedReruns } : {}),
      });
      const row = await gateDecisionById(db, decisionId);
      return { summary, checks: row!.figures.checks! };
    },
    async versionWith(label, extra) {
      const id = `${prefix}/code@${label}`;
      const base = await db.select().from(examples).where(eq(examples.datasetVersionId, baseVersionId));
      await db
        .insert(datasets)
        .values({ id: `${prefix}/code`, campaignId: prod, name: 'code' })
        .onConflictDoNothing();
      const rows = [
        ...base.map((e) => ({ ...e, datasetVersionId: id, createdAt: undefined })),
        ...extra.map((x) => ({
          datasetVersionId: id,
          contentHash: `${label}-${x.ref}`,
          source: 'cheat',
          sourceRef: x.ref,
          content: x.content,
        })),
      ];
      for (let i = 0; i < rows.length; i += 200) await db.insert(examples).values(rows.slice(i, i + 200));
      await db
        .insert(datasetVersions)
        .values({ id, datasetId: `${prefix}/code`, path: path.join(home, label), contentHash: label, countsBySource: {} });
      return id;
    },
  };
}
