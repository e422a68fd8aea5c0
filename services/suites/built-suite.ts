// A suite a task builds itself (core/task.ts BuiltSuite, e.g. the built-in code task's), stored once under
// `<name>@<first 12 hex digits of its content hash>`: its items first, then the suite row, in one transaction; a retry
// or a second worker finds the row and writes nothing.
import crypto from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { BuiltSuite } from '../../core/task';
import type { Db } from '../../db/client';
import { evalItems, evalSuites } from '../../db/schema';

/** The suite's id, after storing it if it was not stored yet. */
export async function ensureBuiltSuite(db: Db, suite: BuiltSuite): Promise<string> {
  const suiteId = `${suite.name}@${suite.contentHash.slice(0, 12)}`;
  const [existing] = await db.select({ id: evalSuites.id }).from(evalSuites).where(eq(evalSuites.id, suiteId));
  if (existing) return suiteId;
  await db.transaction(async (tx) => {
    const rows = suite.items.map((d) => ({
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
      .values({ id: suiteId, name: suite.name, version: 1, contentHash: suite.contentHash, settings: suite.settings })
      .onConflictDoNothing();
  });
  return suiteId;
}

function sha256(s: string): string {
  return crypto.createHash('sha256').update(s).digest('hex');
}
