// Where registered suites came from: `suite add` keeps each suite file's real path in the suite version's settings
// (`sourcePaths`: every file that content was registered from), so the training worker and `flywheel validate` can
// refuse a trainer path that would show one.
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client';

/** Every registered suite's source file, once each, sorted (suites registered before sources were kept have none). */
export async function registeredSuiteSources(db: Db): Promise<string[]> {
  const { rows } = await db.execute<{ path: string }>(
    sql`SELECT DISTINCT p AS path FROM eval_suites, jsonb_array_elements_text(coalesce(settings->'sourcePaths', '[]'::jsonb)) AS p ORDER BY 1`,
  );
  return rows.map((r) => r.path);
}
