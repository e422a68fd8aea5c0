// registerEvalSuite: stores a validated eval suite as a new version (`${name}@${n}`) in PostgreSQL. The same content
// registered again returns the existing version; held-out items are stored with their content hash like every item.
import crypto from 'node:crypto';
import { desc, eq, sql } from 'drizzle-orm';
import { parseSuite, type Suite, type SuiteSettings } from '../../core/eval-suite/suite-schema';
import type { Db } from '../../db/client';
import { evalItems, evalSuites } from '../../db/schema';

export interface RegisteredSuite {
  suiteId: string;
  version: number;
  /** False when the latest version already had this content. */
  created: boolean;
  counts: Record<string, number>;
}

export function itemContentHash(prompt: string, reference: string): string {
  return sha256(prompt + '\u0000' + reference);
}

export interface RegisterSuiteOptions {
  /**
   * The absolute real path of the file the suite was read from, kept in the version's `settings.sourcePaths` (a
   * trainer's read-only paths must not expose it: registeredSuiteSources). Registering the same content from another
   * file adds that path to the existing version.
   * @default none: a suite built in code has no file
   */
  sourcePath?: string;
}

/** Validates (MalformedSuiteError names the failing items) and stores the suite in one transaction. */
export async function registerEvalSuite(db: Db, input: unknown, opts: RegisterSuiteOptions = {}): Promise<RegisteredSuite> {
  const suite = parseSuite(input);
  const contentHash = suiteContentHash(suite);
  const counts: Record<string, number> = {};
  for (const i of suite.items) counts[i.split] = (counts[i.split] ?? 0) + 1;
  return db.transaction(async (tx) => {
    // One registration of a name at a time, so two versions never get the same number.
    await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`eval-suite:${suite.name}`}))`);
    const [latest] = await tx.select().from(evalSuites).where(eq(evalSuites.name, suite.name)).orderBy(desc(evalSuites.version)).limit(1);
    if (latest && latest.contentHash === contentHash) {
      const settings = latest.settings;
      if (opts.sourcePath && !settings.sourcePaths?.includes(opts.sourcePath))
        await tx
          .update(evalSuites)
          .set({ settings: { ...settings, sourcePaths: [...(settings.sourcePaths ?? []), opts.sourcePath] } })
          .where(eq(evalSuites.id, latest.id));
      return { suiteId: latest.id, version: latest.version, created: false, counts };
    }
    const version = (latest?.version ?? 0) + 1;
    const suiteId = `${suite.name}@${version}`;
    const rows = suite.items.map((i) => ({
      id: `${suiteId}/${i.id}`,
      suiteId,
      split: i.split,
      grader: i.grader.kind,
      graderConfig: i.grader as Record<string, unknown>,
      category: i.category,
      prompt: i.prompt,
      reference: i.reference,
      contentHash: itemContentHash(i.prompt, i.reference),
      sourceFile: i.sourceFile,
      probe: i.probe ? { ...i.probe, of: i.probe.of === undefined ? undefined : `${suiteId}/${i.probe.of}` } : null,
      maxBytes: i.maxBytes ?? null,
    }));
    for (let k = 0; k < rows.length; k += 500) await tx.insert(evalItems).values(rows.slice(k, k + 500));
    await tx.insert(evalSuites).values({
      id: suiteId,
      name: suite.name,
      version,
      contentHash,
      settings: {
        rubrics: suite.rubrics,
        canaries: suite.canaries,
        heldoutCanaries: suite.heldoutCanaries,
        ...(opts.sourcePath ? { sourcePaths: [opts.sourcePath] } : {}),
      } satisfies SuiteSettings,
    });
    return { suiteId, version, created: true, counts };
  });
}

function suiteContentHash(s: Suite): string {
  // Held-out canaries (and an item's maxBytes) join the hash only when there are some, so a suite registered before
  // them keeps its version.
  return sha256(
    JSON.stringify([
      s.rubrics,
      s.canaries,
      ...(s.heldoutCanaries.length > 0 ? [s.heldoutCanaries] : []),
      s.items.map((i) => [
        i.id,
        i.split,
        i.grader,
        i.category,
        i.probe ?? null,
        itemContentHash(i.prompt, i.reference),
        ...(i.maxBytes !== undefined ? [i.maxBytes] : []),
      ]),
    ]),
  );
}

function sha256(s: string): string {
  return crypto.createHash('sha256').update(s).digest('hex');
}
