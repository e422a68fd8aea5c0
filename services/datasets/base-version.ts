// A base dataset version a task builds itself (core/task.ts BaseVersionDraft, e.g. the built-in code task's corpus
// train split, one example per file): `<campaignId>/<datasetName>@<tag>`, made once per campaign and tag, written by
// the one version writer (version-files.ts), the files before the rows.
import { eq } from 'drizzle-orm';
import type { BaseVersionDraft } from '../../core/task';
import type { Db } from '../../db/client';
import { datasets, datasetVersions, examples } from '../../db/schema';
import { datasetDirOf } from '../paths';
import { exampleColumns } from './example-rows';
import { versionRecord, writeVersionFiles } from './version-files';

/** The version's id, after writing it if it was not written yet. */
export async function ensureBaseVersion(db: Db, home: string, campaignId: string, draft: BaseVersionDraft): Promise<string> {
  const datasetId = `${campaignId}/${draft.datasetName}`;
  const versionId = `${datasetId}@${draft.tag}`;
  const [existing] = await db.select({ id: datasetVersions.id }).from(datasetVersions).where(eq(datasetVersions.id, versionId));
  if (existing) return versionId;

  const dir = datasetDirOf(home, versionId);
  const { source } = draft;
  const rows = draft.examples().map((e) => ({
    sourceRef: e.sourceRef,
    ...exampleColumns({ prompt: e.prompt, completion: e.completion, category: e.category, weight: 1 }),
  }));
  const countsBySource = { [source]: rows.length };
  const { trainSha256: contentHash } = await writeVersionFiles(
    dir,
    rows.map((r) =>
      versionRecord(
        { prompt: r.prompt ?? '', completion: r.completion ?? r.content, category: r.category, weight: 1, source },
        r.contentHash,
      ),
    ),
    (w) => ({ versionId, parentIds: [], contentHash: w.trainSha256, countsBySource, ...draft.manifest }),
  );

  await db.transaction(async (tx) => {
    await tx.insert(datasets).values({ id: datasetId, campaignId, name: draft.datasetName }).onConflictDoNothing();
    for (let i = 0; i < rows.length; i += 200)
      await tx
        .insert(examples)
        .values(rows.slice(i, i + 200).map((r) => ({ ...r, datasetVersionId: versionId, source })))
        .onConflictDoNothing();
    await tx
      .insert(datasetVersions)
      .values({ id: versionId, datasetId, parentIds: [], path: dir, contentHash, countsBySource })
      .onConflictDoNothing();
  });
  return versionId;
}

/** Whether the dataset version exists. */
export async function datasetVersionExists(db: Db, id: string): Promise<boolean> {
  const [v] = await db.select({ id: datasetVersions.id }).from(datasetVersions).where(eq(datasetVersions.id, id));
  return v !== undefined;
}
