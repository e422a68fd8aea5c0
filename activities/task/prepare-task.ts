// prepareTask: makes the campaign's task ready: a custom task's pinned dataset version and suite
// (prepare-custom-task.ts), or the built-in code task: the corpus (built once per FLYWHEEL_HOME),
// the base dataset version (the corpus's train split) and the eval suite (public and held-out items, disjoint
// by file from the training text and from each other, probes, and held-out canaries). Every row has a deterministic key: a retry upserts.
import crypto from 'node:crypto';
import { eq } from 'drizzle-orm';
import { buildCompletionItems, buildLossItems, type CompletionItem } from '../../tasks/builtin-code/eval-items';
import { buildHeldoutCanaries } from '../../tasks/builtin-code/heldout-canaries';
import { buildBuiltinProbes } from '../../tasks/builtin-code/probes';
import { findOverlaps } from '../../core/dataset/overlap';
import { NotFoundError } from '../../core/errors';
import { datasetVersions, evalItems, evalSuites } from '../../db/schema';
import { ensureBaseVersion } from './builtin-base-version';

import { campaignsOf, type ActivityDeps } from '../deps';
import { prepareCustomTask } from './prepare-custom-task';
import { corpusDirOf } from '../../services/paths';
import { ensureCorpus, evalSplitFiles, readTrainFiles } from '../../tasks/builtin-code/corpus-cache';
import type { CorpusManifest } from '../../tasks/builtin-code/corpus';
import type { PrepareTaskInput, PreparedTask } from '../../contracts/campaign';

export async function prepareTask(deps: ActivityDeps, input: PrepareTaskInput): Promise<PreparedTask> {
  const { db } = deps;
  const spec = await campaignsOf(deps).resolve(input.campaignVersionId);
  const task = spec.task;
  if (task.kind === 'custom') return prepareCustomTask(deps, task, input);
  const corpusDir = corpusDirOf(deps.home);
  const manifest = await ensureCorpus(corpusDir);
  const suiteId = await ensureSuite(deps, corpusDir, manifest, task.completionItems, task.lossItems, spec.innerLoop.seed);
  if (input.datasetVersionId) {
    const [v] = await db.select().from(datasetVersions).where(eq(datasetVersions.id, input.datasetVersionId));
    if (!v) throw new NotFoundError(`dataset version "${input.datasetVersionId}" does not exist`);
    return { datasetVersionId: v.id, suiteId };
  }
  return { datasetVersionId: await ensureBaseVersion(deps, spec.name, corpusDir, manifest), suiteId };
}

async function ensureSuite(
  deps: ActivityDeps,
  corpusDir: string,
  manifest: CorpusManifest,
  completions: number,
  losses: number,
  seed: number,
): Promise<string> {
  const { db } = deps;
  const corpusHash = manifest.contentSha256;
  const splitFiles = { public: await evalSplitFiles('public'), heldout: await evalSplitFiles('heldout') };
  const built = (['public', 'heldout'] as const).flatMap((split) => {
    const files = splitFiles[split];
    return [
      ...buildCompletionItems(split, files, { count: completions, seed }),
      ...buildLossItems(split, files, { count: losses, seed }),
    ].map((d) => ({ ...d, split }));
  });
  // Files are split disjointly, but code repeats across packages (licence headers, shared helpers): an eval
  // item whose text a training file nearly copies would measure memory, not skill, so it is dropped here.
  // The whole training text is one candidate, so n-grams spread over several files count together.
  // Probes (twins of public completion items, canaries, cheat-only items; tasks/builtin-code/probes.ts) are held to
  // the same rule, and a twin goes with its original.
  const publicCompletions = built.filter(
    (d): d is CompletionItem & { split: 'public' } => d.split === 'public' && d.grader === 'exact_token',
  );
  const { probes, canaries } = buildBuiltinProbes(publicCompletions, seed);
  // Held-out canaries (tasks/builtin-code/heldout-canaries.ts): held-out items only, derived from the held-out text.
  const heldoutDigest = sha256(JSON.stringify(built.filter((d) => d.split === 'heldout').map((d) => [d.id, d.prompt, d.reference])));
  const heldoutCanaries = buildHeldoutCanaries(seed, heldoutDigest);
  const all = [
    ...[...built, ...heldoutCanaries.items.map((d) => ({ ...d, split: 'heldout' as const }))].map((d) => ({
      ...d,
      graderConfig: null as Record<string, unknown> | null,
      probe: null as { kind: string; of?: string } | null,
    })),
    ...probes.map((p) => ({
      ...p,
      split: 'probe' as const,
      grader: p.grader.kind,
      graderConfig: p.grader as Record<string, unknown>,
      probe: p.probe,
    })),
  ];
  const { text: train } = readTrainFiles(corpusDir, manifest);
  const leaked = new Set(
    findOverlaps(
      [{ key: 'train', text: train }],
      all.map((d) => ({ id: d.id, text: d.prompt + d.reference })),
    ).flatMap((o) => o.evalIds),
  );
  const drafts = all.filter((d) => !leaked.has(d.id) && !(d.probe?.of !== undefined && leaked.has(d.probe.of)));
  const heldoutCanaryTexts = heldoutCanaries.canaries.filter((_, k) => !leaked.has(heldoutCanaries.items[k].id));
  const contentHash = sha256(
    JSON.stringify([canaries, heldoutCanaryTexts, drafts.map((d) => [d.id, d.split, d.prompt, d.reference, d.graderConfig, d.probe])]),
  );
  const suiteId = `builtin-code@${contentHash.slice(0, 12)}`;
  const [existing] = await db.select({ id: evalSuites.id }).from(evalSuites).where(eq(evalSuites.id, suiteId));
  if (existing) return suiteId;
  await db.transaction(async (tx) => {
    const rows = drafts.map((d) => ({
      id: `${suiteId}/${d.id}`,
      suiteId,
      split: d.split,
      grader: d.grader,
      category: d.category,
      prompt: d.prompt,
      reference: d.reference,
      contentHash: sha256(d.prompt + '\u0000' + d.reference),
      sourceFile: d.sourceFile,
      graderConfig: d.graderConfig,
      probe: d.probe && { ...d.probe, of: d.probe.of === undefined ? undefined : `${suiteId}/${d.probe.of}` },
    }));
    for (let i = 0; i < rows.length; i += 500)
      await tx
        .insert(evalItems)
        .values(rows.slice(i, i + 500))
        .onConflictDoNothing();
    await tx
      .insert(evalSuites)
      .values({
        id: suiteId,
        name: 'builtin-code',
        version: 1,
        contentHash,
        settings: { corpusHash, droppedForOverlapWithTrain: leaked.size, canaries, heldoutCanaries: heldoutCanaryTexts },
      })
      .onConflictDoNothing();
  });
  return suiteId;
}

function sha256(s: string): string {
  return crypto.createHash('sha256').update(s).digest('hex');
}
