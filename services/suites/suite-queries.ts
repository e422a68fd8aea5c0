// Reading registered eval suites for people and for campaign specs: a name (or `NAME@N`) resolved to a version, the
// versions listed with their item counts, one version's counts per split, category and grader with a sample of its
// public and probe items, and the shape (split, grader, category; never text) its metrics come from. Held-out items
// are counted in SQL and never selected with their text: nothing here can show one.
import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import { NotFoundError } from '../../core/errors';
import type { Db } from '../../db/client';
import { evalItems, evalSuites } from '../../db/schema';

/**
 * The suite version a reference names: `NAME@N` as it is, a bare `NAME` its newest version. NotFoundError, naming
 * what was asked and how to register it, when there is none.
 */
export async function resolveSuiteRef(db: Db, ref: string): Promise<string> {
  const at = ref.lastIndexOf('@');
  const name = at < 0 ? ref : ref.slice(0, at);
  if (at >= 0) {
    const [row] = await db.select({ id: evalSuites.id }).from(evalSuites).where(eq(evalSuites.id, ref));
    if (row) return row.id;
    const [any] = await db.select({ id: evalSuites.id }).from(evalSuites).where(eq(evalSuites.name, name)).limit(1);
    throw new NotFoundError(
      any
        ? `suite version "${ref}" is not registered (flywheel suite list shows the versions of "${name}")`
        : `suite "${name}" is not registered (flywheel suite add FILE.json)`,
    );
  }
  const [latest] = await db
    .select({ id: evalSuites.id })
    .from(evalSuites)
    .where(eq(evalSuites.name, name))
    .orderBy(desc(evalSuites.version))
    .limit(1);
  if (!latest) throw new NotFoundError(`suite "${name}" is not registered (flywheel suite add FILE.json)`);
  return latest.id;
}

export interface SuiteListing {
  name: string;
  /** The newest version's id, `NAME@N`. */
  newest: string;
  versions: number;
  /** The newest version's items per split. */
  items: Record<string, number>;
}

/** Every registered suite name with its newest version and that version's items per split, by name. */
export async function listSuites(db: Db): Promise<SuiteListing[]> {
  const newest = await db
    .selectDistinctOn([evalSuites.name], { id: evalSuites.id, name: evalSuites.name })
    .from(evalSuites)
    .orderBy(evalSuites.name, desc(evalSuites.version));
  if (newest.length === 0) return [];
  const versions = await db
    .select({ name: evalSuites.name, n: sql<number>`count(*)::int` })
    .from(evalSuites)
    .groupBy(evalSuites.name);
  const counts = await splitCounts(
    db,
    newest.map((s) => s.id),
  );
  return newest.map((s) => ({
    name: s.name,
    newest: s.id,
    versions: versions.find((v) => v.name === s.name)?.n ?? 1,
    items: counts.get(s.id) ?? {},
  }));
}

async function splitCounts(db: Db, suiteIds: string[]): Promise<Map<string, Record<string, number>>> {
  const rows = await db
    .select({ suiteId: evalItems.suiteId, split: evalItems.split, n: sql<number>`count(*)::int` })
    .from(evalItems)
    .where(inArray(evalItems.suiteId, suiteIds))
    .groupBy(evalItems.suiteId, evalItems.split);
  const out = new Map<string, Record<string, number>>();
  for (const r of rows) out.set(r.suiteId, { ...out.get(r.suiteId), [r.split]: r.n });
  return out;
}

export interface SampledItem {
  id: string;
  split: string;
  grader: string;
  category: string;
  prompt: string;
  reference: string;
}

export interface SuiteDetail {
  id: string;
  canaries: number;
  heldoutCanaries: number;
  /** Items per split, then per split and category, and per split and grader kind. */
  bySplit: Record<string, number>;
  byCategory: Record<string, Record<string, number>>;
  byGrader: Record<string, Record<string, number>>;
  /** A few public and probe items, with their text; never a held-out one. */
  sample: SampledItem[];
}

/** One suite version (a bare name: its newest) counted, with up to `sample` public and probe items each. */
export async function showSuite(db: Db, ref: string, opts: { sample?: number } = {}): Promise<SuiteDetail> {
  const id = await resolveSuiteRef(db, ref);
  const [suite] = await db.select({ settings: evalSuites.settings }).from(evalSuites).where(eq(evalSuites.id, id));
  const settings = (suite?.settings ?? {}) as { canaries?: string[]; heldoutCanaries?: string[] };
  const rows = await db
    .select({ split: evalItems.split, grader: evalItems.grader, category: evalItems.category, n: sql<number>`count(*)::int` })
    .from(evalItems)
    .where(eq(evalItems.suiteId, id))
    .groupBy(evalItems.split, evalItems.grader, evalItems.category);
  const bySplit: Record<string, number> = {};
  const byCategory: Record<string, Record<string, number>> = {};
  const byGrader: Record<string, Record<string, number>> = {};
  for (const r of rows) {
    bySplit[r.split] = (bySplit[r.split] ?? 0) + r.n;
    (byCategory[r.split] ??= {})[r.category] = (byCategory[r.split][r.category] ?? 0) + r.n;
    (byGrader[r.split] ??= {})[r.grader] = (byGrader[r.split][r.grader] ?? 0) + r.n;
  }
  const n = opts.sample ?? 3;
  const sample: SampledItem[] = [];
  for (const split of ['public', 'probe'] as const) {
    if (n <= 0) break;
    const items = await db
      .select({
        id: evalItems.id,
        split: evalItems.split,
        grader: evalItems.grader,
        category: evalItems.category,
        prompt: evalItems.prompt,
        reference: evalItems.reference,
      })
      .from(evalItems)
      .where(and(eq(evalItems.suiteId, id), eq(evalItems.split, split)))
      .orderBy(evalItems.id)
      .limit(n);
    sample.push(...items);
  }
  return {
    id,
    canaries: settings.canaries?.length ?? 0,
    heldoutCanaries: settings.heldoutCanaries?.length ?? 0,
    bySplit,
    byCategory,
    byGrader,
    sample,
  };
}

/** The split, grader and category of each of a suite's public items (what its reported metrics come from). */
export async function publicMetricItems(db: Db, suiteId: string): Promise<{ split: string; grader: string; category: string }[]> {
  return db
    .select({ split: evalItems.split, grader: evalItems.grader, category: evalItems.category })
    .from(evalItems)
    .where(and(eq(evalItems.suiteId, suiteId), eq(evalItems.split, 'public')));
}
