// What the contamination checks compare training text with: every registered suite's eval items (of the splits
// asked) and its canaries and held-out canaries. The loop's check (activities/eval/check-contamination.ts) asks for
// every split before any training run; `flywheel dataset add` asks for held-out, test and probe items before it
// writes anything. Held-out and test items come through the logged read, as every read of a sealed split does.
import { eq, inArray } from 'drizzle-orm';
import type { ContaminationCanary, ContaminationEvalItem } from '../../core/dataset/contamination';
import type { SuiteSplit } from '../../core/eval-suite/suite-schema';
import type { Db } from '../../db/client';
import { evalItems, evalSuites } from '../../db/schema';
import { readSealedItems, type SealedSplit } from './heldout-items';

export interface ContaminationSources {
  /** Each item's text is its prompt followed by its reference; the other splits' items come before the sealed ones. */
  items: ContaminationEvalItem[];
  /** `SUITE#canaryK` and `SUITE#heldout-canaryK`: names that do not reveal the strings. */
  canaries: ContaminationCanary[];
}

/** `reader` is logged with each suite's held-out and test read (purpose `contamination`). */
export async function contaminationSources(db: Db, reader: string, splits: readonly SuiteSplit[]): Promise<ContaminationSources> {
  const suites = await db.select({ id: evalSuites.id, settings: evalSuites.settings }).from(evalSuites);
  const sealed = splits.filter((s): s is SealedSplit => s === 'heldout' || s === 'test');
  const others = splits.filter((s) => s !== 'heldout' && s !== 'test');
  const rows = others.length
    ? await db
        .select({ id: evalItems.id, split: evalItems.split, prompt: evalItems.prompt, reference: evalItems.reference })
        .from(evalItems)
        .where(inArray(evalItems.split, others))
    : [];
  // Every suite's held-out split is read (and logged); the test split only of the suites that have one.
  const withTest = new Set(
    sealed.includes('test')
      ? (await db.selectDistinct({ id: evalItems.suiteId }).from(evalItems).where(eq(evalItems.split, 'test'))).map((r) => r.id)
      : [],
  );
  for (const split of sealed)
    for (const s of suites)
      if (split === 'heldout' || withTest.has(s.id)) rows.push(...(await readSealedItems(db, s.id, split, reader, 'contamination')));
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
