// What a model answered on the public split, item by item: each public item's prompt, reference, the output as graded
// (eval_results.details.outputs, kept for the public split only) and its grade, for the experiment page, the compare
// page, `flywheel show` and `flywheel compare`. Only public items are ever read here: held-out, probe and test items
// (their ids, text and outputs) never leave the eval activity.
import { and, asc, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { LOSS_GRADER } from '../../core/eval-suite/suite-metrics';
import { campaigns, checkpoints, evalItems, evalResults, experiments } from '../../db/schema';

/** pass: full marks; fail: less (an error, or partial credit, shown with its score); loss: a bits-per-byte item. */
export type Verdict = 'pass' | 'fail' | 'loss';

export interface PredictionItem {
  id: string;
  category: string;
  grader: string;
  prompt: string;
  reference: string;
  /** The output as graded; undefined for loss items and for results scored before outputs were kept. */
  output?: string;
  /** The item's score (bits per byte for a loss item); null where the result has none. */
  score: number | null;
  verdict: Verdict;
  /** Why the grader could not score it. */
  error?: string;
}

export interface PublicPredictions {
  experimentId: string;
  checkpointId: string;
  suiteId: string;
  metrics: Record<string, number>;
  /** Whether the result kept the outputs (results scored before they were kept hold grades only). */
  outputsStored: boolean;
  /** Every category of the split, for a filter. */
  categories: string[];
  items: PredictionItem[];
}

export interface PredictionFilter {
  category?: string;
  verdict?: Verdict;
}

const verdictOf = (grader: string, score: number | null, error: string | undefined): Verdict =>
  grader === LOSS_GRADER ? 'loss' : score !== null && score >= 1 && error === undefined ? 'pass' : 'fail';

/** The public result of one checkpoint (`checkpointId`), or of the experiment's best checkpoint (else its newest). */
async function publicResult(db: Db, by: { experimentId: string } | { checkpointId: string }) {
  const best = sql`${evalResults.checkpointId} = (select ${experiments.bestCheckpointId} from ${experiments} where ${experiments.id} = ${evalResults.experimentId})`;
  const [row] = await db
    .select()
    .from(evalResults)
    .where(
      and(
        eq(evalResults.split, 'public'),
        'experimentId' in by ? eq(evalResults.experimentId, by.experimentId) : eq(evalResults.checkpointId, by.checkpointId),
      ),
    )
    .orderBy(desc(best), desc(evalResults.createdAt))
    .limit(1);
  return row;
}

/**
 * The public split's predictions of an experiment (its best checkpoint's public result) or of one checkpoint, with
 * `filter` applied to the items; undefined when it has no public result.
 */
export async function publicPredictions(
  db: Db,
  by: { experimentId: string } | { checkpointId: string },
  filter: PredictionFilter = {},
): Promise<PublicPredictions | undefined> {
  const result = await publicResult(db, by);
  if (!result) return undefined;
  const rows = await db
    .select({
      id: evalItems.id,
      category: evalItems.category,
      grader: evalItems.grader,
      prompt: evalItems.prompt,
      reference: evalItems.reference,
    })
    .from(evalItems)
    // The public split alone, whatever the result row says.
    .where(and(eq(evalItems.suiteId, result.suiteId), eq(evalItems.split, 'public')))
    .orderBy(asc(evalItems.id));
  const { outputs } = result.details;
  const errors = result.details.errors ?? {};
  const items = rows.map((r): PredictionItem => {
    const score = result.perItem[r.id] ?? null;
    return {
      ...r,
      output: outputs?.[r.id],
      score,
      verdict: verdictOf(r.grader, score, errors[r.id]),
      ...(errors[r.id] !== undefined ? { error: errors[r.id] } : {}),
    };
  });
  return {
    experimentId: result.experimentId,
    checkpointId: result.checkpointId,
    suiteId: result.suiteId,
    metrics: result.metrics,
    outputsStored: outputs !== undefined,
    categories: [...new Set(rows.map((r) => r.category))].sort(),
    items: items.filter((i) => (!filter.category || i.category === filter.category) && (!filter.verdict || i.verdict === filter.verdict)),
  };
}

/**
 * What a compare side names: an experiment id (its best checkpoint), or a campaign name (its production model's
 * checkpoint); undefined when it is neither, or a campaign with no production model yet.
 */
export async function resolveSubject(db: Db, name: string): Promise<{ experimentId: string } | { checkpointId: string } | undefined> {
  const [e] = await db.select({ id: experiments.id }).from(experiments).where(eq(experiments.id, name));
  if (e) return { experimentId: e.id };
  const [c] = await db
    .select({ checkpoint: campaigns.productionCheckpointId })
    .from(campaigns)
    .innerJoin(checkpoints, eq(checkpoints.id, campaigns.productionCheckpointId))
    .where(eq(campaigns.id, name));
  return c?.checkpoint ? { checkpointId: c.checkpoint } : undefined;
}

export interface ComparedItem {
  id: string;
  category: string;
  reference: string;
  a: PredictionItem;
  b: PredictionItem;
  /** same: both pass or both fail (or a loss item); better / worse: B passes where A fails, or the reverse. */
  change: 'same' | 'better' | 'worse';
}

export interface Comparison {
  a: PublicPredictions;
  b: PublicPredictions;
  /** The public items both results graded (the same suite's, or those two suites share by id). */
  items: ComparedItem[];
}

/** Two public results item by item (B against A), filtered by category and change. */
export function compareResults(
  a: PublicPredictions,
  b: PublicPredictions,
  filter: { category?: string; change?: ComparedItem['change'] } = {},
): Comparison {
  const byId = new Map(b.items.map((i) => [i.id, i]));
  const items = a.items.flatMap((x): ComparedItem[] => {
    const y = byId.get(x.id);
    if (!y) return [];
    const change = x.verdict === y.verdict || x.verdict === 'loss' ? 'same' : y.verdict === 'pass' ? 'better' : 'worse';
    return [{ id: x.id, category: x.category, reference: x.reference, a: x, b: y, change }];
  });
  return {
    a,
    b,
    items: items.filter((i) => (!filter.category || i.category === filter.category) && (!filter.change || i.change === filter.change)),
  };
}
