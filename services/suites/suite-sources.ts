// Where registered suites came from: `suite add` keeps each suite file's real path in the suite version's settings
// (`sourcePaths`: every file that content was registered from), so the training worker and `flywheel validate` can
// refuse a trainer path that would show one.
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { evalSuites } from '../../db/schema';

/** Every registered suite's source file, once each, sorted (suites registered before sources were kept have none). */
export async function registeredSuiteSources(db: Db): Promise<string[]> {
  const path = sql<string>`jsonb_array_elements_text(coalesce(${evalSuites.settings}->'sourcePaths', '[]'::jsonb))`.as('path');
  const rows = await db.selectDistinct({ path }).from(evalSuites).orderBy(path);
  return rows.map((r) => r.path);
}
