// The built-in code task's base dataset version: the corpus's train split, one example per file (prompt "",
// completion = the file's text, category = its language), written by the one version writer
// (services/datasets/version-files.ts), so its train.txt is the corpus's train text and its train.jsonl holds the files.
import { eq } from 'drizzle-orm';
import { datasets, datasetVersions, examples } from '../../db/schema';
import { languageOf } from '../../tasks/builtin-code/eval-items';
import { readTrainFiles } from '../../tasks/builtin-code/corpus-cache';
import type { CorpusManifest } from '../../tasks/builtin-code/corpus';
import { datasetDirOf } from '../../services/paths';
import { exampleColumns } from '../../services/datasets/example-rows';
import { versionRecord, writeVersionFiles } from '../../services/datasets/version-files';
import type { ActivityDeps } from '../deps';

/** `<campaignId>/code@base-<corpus hash>`: made once per campaign and corpus; the files before the row. */
export async function ensureBaseVersion(
  deps: ActivityDeps,
  campaignId: string,
  corpusDir: string,
  manifest: CorpusManifest,
): Promise<string> {
  const corpusHash = manifest.contentSha256;
  const { db } = deps;
  const datasetId = `${campaignId}/code`;
  const versionId = `${datasetId}@base-${corpusHash.slice(0, 12)}`;
  const [existing] = await db.select({ id: datasetVersions.id }).from(datasetVersions).where(eq(datasetVersions.id, versionId));
  if (existing) return versionId;

  const dir = datasetDirOf(deps.home, versionId);
  const { files: train } = readTrainFiles(corpusDir, manifest);
  const rows = train.map((f) => ({
    sourceRef: f.file,
    ...exampleColumns({ prompt: '', completion: f.text, category: languageOf(f.file), weight: 1 }),
  }));
  const countsBySource = { corpus: train.length };
  const { trainSha256: contentHash } = await writeVersionFiles(
    dir,
    rows.map((r) => versionRecord({ prompt: '', completion: r.content, category: r.category, weight: 1, source: 'corpus' }, r.contentHash)),
    (w) => ({ versionId, parentIds: [], contentHash: w.trainSha256, countsBySource, corpusHash }),
  );

  await db.transaction(async (tx) => {
    await tx.insert(datasets).values({ id: datasetId, campaignId, name: 'code' }).onConflictDoNothing();
    for (let i = 0; i < rows.length; i += 200)
      await tx
        .insert(examples)
        .values(rows.slice(i, i + 200).map((r) => ({ ...r, datasetVersionId: versionId, source: 'corpus' })))
        .onConflictDoNothing();
    await tx
      .insert(datasetVersions)
      .values({ id: versionId, datasetId, parentIds: [], path: dir, contentHash, countsBySource })
      .onConflictDoNothing();
  });
  return versionId;
}
