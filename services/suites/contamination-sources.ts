// What the contamination checks compare training text with: every registered suite's eval items (of the splits
// asked) and its canaries and held-out canaries. The loop's check (activities/eval/check-contamination.ts) asks for
// every split before any training run; `flywheel dataset add` asks for held-out and probe items before it writes
// anything. Held-out items come through the logged read, as every held-out read does.
import { inArray } from 'drizzle-orm';
import type { ContaminationCanary, ContaminationEvalItem } from '../../core/dataset/contamination';
import type { SuiteSplit } from '../../core/eval-suite/suite-schema';
import type { Db } from '../../db/client';
import { evalItems, evalSuites } from '../../db/schema';
import { readHeldoutItems } from './heldout-items';

export interface ContaminationSources {
  /** Each item's text is its prompt followed by its reference; the other splits' items come before held-out ones. */
  items: ContaminationEvalItem[];
  /** `SUITE#canaryK` and `SUITE#heldout-canaryK`: names that do not reveal the strings. */
  canaries: ContaminationCanary[];
}

/** `reader` is logged with each suite's held-out read (purpose `contamination`). */
export async function contaminationSources(db: Db, reader: string, splits: readonly SuiteSplit[]): Promise<ContaminationSources> {
  const suites = await db.select({ id: evalSuites.id, settings: evalSuites.settings }).from(evalSuites);
  const others = splits.filter((s) => s !== 'heldout');
  const rows = others.length
    ? await db
        .select({ id: evalItems.id, split: evalItems.split, prompt: evalItems.prompt, reference: evalItems.reference })
        .from(evalItems)
        .where(inArray(evalItems.split, others))
    : [];
  if (splits.includes('heldout')) for (const s of suites) rows.push(...(await readHeldoutItems(db, s.id, reader, 'contamination')));
  // Held-out canaries are checked by name too: the overlap check would catch the items that carry them, but a bare
  // canary in an example is proof of a held-out leak on its own.
  const canaries = suites.flatMap((s) => {
    const { canaries: pub = [], heldoutCanaries = [] } = s.settings;
    return [
      ...pub.map((text, k) => ({ id: `${s.id}#canary${k}`, text })),
      ...heldoutCanaries.map((text, k) => ({ id: `${s.id}#heldout-canary${k}`, text })),
    ];
  });
  return { items: rows.map((i) => ({ id: i.id, split: i.split, text: i.prompt + i.reference })), canaries };
}
