// The planted-cheats bench and test share this: the built-in suite with its probes, a production checkpoint, and for
// each recipe a campaign whose trainer is that recipe (infra/trainers/cheats), scored and gated by the real activities.
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from '../../activities/training/trainer-command';
import { sandboxAvailable } from './sandbox';
import { MockActivityEnvironment } from '@temporalio/testing';
import { and, eq } from 'drizzle-orm';
import { prepareTask } from '../../activities/builtin-task/prepare-task';
import { registerCampaign } from '../../activities/campaign/register-campaign';
import type { ActivityDeps } from '../../activities/deps';
import { scoreCheckpoint, type EvalSplit } from '../../activities/eval/score-checkpoint';
import { evaluateGate, type GateSummary } from '../../activities/outer/evaluate-gate';
import type { Db } from '../../db/client';
import { checkpoints, datasets, datasetVersions, decisions, evalItems, examples, experiments } from '../../db/schema';
import { trainCheckpoint } from './charlm-checkpoint';
import { fastBuiltinSpec } from './specs';

const CHEATS = path.join(__dirname, '..', '..', 'infra', 'trainers', 'cheats', 'main.ts');
const RUN_TS = path.join(__dirname, '..', '..', 'bin', 'run-ts.js');

export type OutputRecipe = 'honest' | 'memorise' | 'tamper';

export interface PlantedCheats {
  suiteId: string;
  baseVersionId: string;
  /** The base version's training text. */
  trainText: string;
  /** A production checkpoint (a short honest run) for `tag`, scored on every split. */
  production(tag: string, seed: number): Promise<string>;
  /** A campaign `${prefix}-${recipe}${tag}` whose trainer is `recipe`, holding `file` as its candidate. */
  candidate(recipe: OutputRecipe, tag: string, file: { path: string; sha256: string }): Promise<string>;
  /** Scores both checkpoints on every split and gates the candidate; the decision row's checks. */
  gate(recipe: OutputRecipe, tag: string, candidate: string, incumbent: string): Promise<{ summary: GateSummary; checks: Record<string, { passed: boolean; reason: string }> }>;
  /** A dataset version: the base examples plus `extra` (source `cheat`). */
  versionWith(label: string, extra: { ref: string; content: string }[]): Promise<string>;
  publicItems(): Promise<{ prompt: string; reference: string }[]>;
}

const run = <A extends unknown[], R>(fn: (...a: A) => Promise<R>, ...args: A): Promise<R> => new MockActivityEnvironment({ heartbeatTimeoutMs: 60_000 }).run(fn, ...args);

export async function plantedCheats(db: Db, home: string, prefix: string): Promise<PlantedCheats> {
  const deps: ActivityDeps = { db, home };
  // Beside FLYWHEEL_HOME, not in it: the sandbox hides FLYWHEEL_HOME from the cheat, and the leak is given on purpose.
  const leakDir = `${home}-leak`;
  fs.mkdirSync(leakDir, { recursive: true });
  const leakFile = path.join(leakDir, 'leak.json');
  const prod = `${prefix}-production`;
  await registerCampaign(db, { campaignId: prod, spec: fastBuiltinSpec(prod) });
  const { suiteId, datasetVersionId: baseVersionId } = await prepareTask(deps, { campaignId: prod });
  const publicItems = async () => db.select({ prompt: evalItems.prompt, reference: evalItems.reference }).from(evalItems).where(and(eq(evalItems.suiteId, suiteId), eq(evalItems.split, 'public')));
  // What a leak of the public split gives a cheater.
  fs.writeFileSync(leakFile, JSON.stringify({ public: await publicItems() }));
  const [version] = await db.select().from(datasetVersions).where(eq(datasetVersions.id, baseVersionId));
  const trainText = fs.readFileSync(path.join(version.path, 'train.txt'), 'utf8');
  const scoreAll = async (checkpointId: string) => {
    for (const split of ['public', 'heldout', 'probe'] as EvalSplit[]) await run(scoreCheckpoint, deps, { checkpointId, suiteId, split, purpose: 'gate' });
  };
  return {
    suiteId,
    baseVersionId,
    trainText,
    publicItems,
    async production(tag, seed) {
      const experimentId = `${prod}/e${tag}`;
      await db.insert(experiments).values({ id: experimentId, campaignId: prod, innerLoopId: `${prod}/inner`, index: 0, datasetVersionId: baseVersionId, params: {}, proposer: 'test', status: 'succeeded' });
      const id = (await trainCheckpoint({ dir: home, id: `${experimentId}/r1/step-20`, text: trainText, seed, steps: 20, db, experimentId })).id;
      await scoreAll(id);
      return id;
    },
    async candidate(recipe, tag, file) {
      const campaignId = `${prefix}-${recipe}${tag}`;
      const command = [process.execPath, RUN_TS, CHEATS, recipe, leakFile];
      const trainer = { command, readOnlyPaths: [REPO, leakDir], unsandboxed: !sandboxAvailable };
      await registerCampaign(db, { campaignId, spec: fastBuiltinSpec(campaignId, { trainer } as never) });
      const experimentId = `${campaignId}/e1`;
      await db.insert(experiments).values({ id: experimentId, campaignId, innerLoopId: `${campaignId}/inner`, index: 1, datasetVersionId: baseVersionId, params: { recipe }, proposer: 'test', status: 'succeeded' });
      const id = `${experimentId}/r1/step-300`;
      await db.insert(checkpoints).values({ id, runId: `${experimentId}/r1`, experimentId, step: 300, path: file.path, sha256: file.sha256, format: 'charlm-v1' });
      return id;
    },
    async gate(recipe, tag, candidate, incumbent) {
      await scoreAll(candidate);
      const decisionId = `${prefix}-${recipe}${tag}/outer/i1/gate`;
      const summary = await evaluateGate(db, { decisionId, campaignId: `${prefix}-${recipe}${tag}`, candidateCheckpointId: candidate, incumbentCheckpointId: incumbent, suiteId });
      const [row] = await db.select().from(decisions).where(eq(decisions.id, decisionId));
      return { summary, checks: (row.figures as { checks: Record<string, { passed: boolean; reason: string }> }).checks };
    },
    async versionWith(label, extra) {
      const id = `${prefix}/code@${label}`;
      const base = await db.select().from(examples).where(eq(examples.datasetVersionId, baseVersionId));
      await db.insert(datasets).values({ id: `${prefix}/code`, campaignId: prod, name: 'code' }).onConflictDoNothing();
      const rows = [...base.map((e) => ({ ...e, datasetVersionId: id, createdAt: undefined })), ...extra.map((x) => ({ datasetVersionId: id, contentHash: `${label}-${x.ref}`, source: 'cheat', sourceRef: x.ref, content: x.content }))];
      for (let i = 0; i < rows.length; i += 200) await db.insert(examples).values(rows.slice(i, i + 200));
      await db.insert(datasetVersions).values({ id, datasetId: `${prefix}/code`, path: path.join(home, label), contentHash: label, countsBySource: {} });
      return id;
    },
  };
}
