// `flywheel demo` runs in a campaign of its own each time: a rerun in the same home starts again from the untrained
// model with no earlier trials or feedback, so the same seed prints the same figures. The first demo keeps the
// spec's name (`builtin-demo`); later ones are `builtin-demo-2`, `builtin-demo-3`, …
import { like, or, eq } from 'drizzle-orm';
import type { Db } from '../db/client';
import { campaigns } from '../db/schema';

export async function freshDemoCampaign(db: Db, base: string): Promise<string> {
  const rows = await db
    .select({ id: campaigns.id })
    .from(campaigns)
    .where(or(eq(campaigns.id, base), like(campaigns.id, `${base}-%`)));
  const taken = new Set(rows.map((r) => r.id));
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}
