// An eval suite as data: items with a prompt, a reference and a grader, in a public, held-out, test or probe split, plus
// the suite's LLM-judge rubrics, canary strings and held-out canaries. `parseSuite` rejects a malformed suite naming
// every failing item.
import { z } from 'zod';
import { graderConfigSchema, type GraderConfig } from '../graders';
import { UsageError } from '../errors';
import { itemLabel, MAX_SUITE_ITEMS, oversizedFields } from './suite-limits';

/**
 * `test` is the sealed split: scored only for reports (what production really scores), never read by a decision; it is
 * kept like held-out.
 */
export type SuiteSplit = 'public' | 'heldout' | 'test' | 'probe';

/** The splits whose items never leave the eval activity: an external LLM judge cannot grade them. */
const SEALED_SPLITS: readonly SuiteSplit[] = ['heldout', 'test'];

/** What a probe is for (see DESIGN.md, "Eval integrity"). */
export type ProbeKind = 'perturbed' | 'paraphrased' | 'canary' | 'cheat_only';

export const probeSchema = z.strictObject({
  kind: z.enum(['perturbed', 'paraphrased', 'canary', 'cheat_only']),
  /** The public item a twin is the twin of (perturbed and paraphrased twins only). */
  of: z.string().optional(),
});
export type Probe = z.output<typeof probeSchema>;

export const suiteItemSchema = z.strictObject({
  /** Unique within the suite; letters, digits and `._:-`. */
  id: z.string().regex(/^[\w.:-]{1,120}$/, 'letters, digits and ._:- only, at most 120'),
  split: z.enum(['public', 'heldout', 'test', 'probe']),
  grader: graderConfigSchema,
  prompt: z.string(),
  reference: z.string(),
  /** Groups items in reports and the gate's per-category bound. @default "general" */
  category: z.string().min(1).default('general'),
  /** Required on a probe-split item, absent elsewhere. */
  probe: probeSchema.optional(),
  /** Where the item came from, for lineage. @default "" */
  sourceFile: z.string().default(''),
  /**
   * The longest output `predict` is asked for on this item, in bytes (1..65536).
   * @default the grader's: 48 for exact_token (the next token), 2048 for every other
   */
  maxBytes: z.number().int().min(1).max(65_536).optional(),
});
export type SuiteItem = z.output<typeof suiteItemSchema>;

export const suiteSchema = z.strictObject({
  /** The suite's name; versions are `${name}@${n}`. */
  name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, 'lower-case letters, digits and ._- only'),
  /** LLM-judge rubrics by name, stored beside the suite. @default {} */
  rubrics: z.record(z.string(), z.string().min(1)).default({}),
  /** Strings that must never appear in a training example nor in a candidate's outputs. @default [] */
  canaries: z.array(z.string().min(12, 'a canary needs at least 12 characters to be unmistakable')).default([]),
  /**
   * Held-out canaries: strings written into held-out items' text (and no other split's), that no candidate output
   * may complete. One that does proves the model saw held-out text; the gate rejects it (`heldoutCanaryInOutputs`).
   * @default []
   */
  heldoutCanaries: z.array(z.string().min(12, 'a canary needs at least 12 characters to be unmistakable')).default([]),
  items: z.array(z.unknown()).min(1, 'a suite needs at least one item').max(MAX_SUITE_ITEMS, `at most ${MAX_SUITE_ITEMS} items`),
});

export interface Suite {
  name: string;
  rubrics: Record<string, string>;
  canaries: string[];
  heldoutCanaries: string[];
  items: SuiteItem[];
}

/** A registered suite version's settings (eval_suites.settings): its rubrics and canaries, and where it was read from. */
export interface SuiteSettings {
  rubrics?: Record<string, string>;
  canaries?: string[];
  heldoutCanaries?: string[];
  /** The real paths of the files this content was registered from. */
  sourcePaths?: string[];
  /** The built-in code task's suite: the hash of the corpus it was cut from, and how many items overlapped train. */
  corpusHash?: string;
  droppedForOverlapWithTrain?: number;
}

/** A suite that fails validation; the message names every failing item. Bad input: retrying cannot help, and the CLI exits 2. */
export class MalformedSuiteError extends UsageError {}

const MAX_LISTED = 20;

/** A validated suite, or a MalformedSuiteError naming each failing item (`items[3] "id": path: problem`). */
export function parseSuite(input: unknown): Suite {
  const oversized = oversizedFields(input);
  if (oversized.length > 0) throw malformed((input as { name?: unknown }).name, oversized);
  const top = suiteSchema.safeParse(input);
  if (!top.success) {
    throw new MalformedSuiteError(
      `malformed eval suite: ${top.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
    );
  }
  const problems: string[] = [];
  const items: SuiteItem[] = [];
  top.data.items.forEach((raw, i) => {
    const r = suiteItemSchema.safeParse(raw);
    const name = itemLabel(raw, i);
    if (!r.success) problems.push(`${name}: ${r.error.issues.map((x) => `${x.path.join('.') || '(item)'}: ${x.message}`).join(', ')}`);
    else items.push(r.data);
  });
  const byId = new Map<string, SuiteItem>();
  items.forEach((item) => {
    if (byId.has(item.id)) problems.push(`item "${item.id}": the id is used twice`);
    byId.set(item.id, item);
  });
  for (const item of items) {
    const problem = crossCheck(item, byId, top.data.rubrics);
    if (problem) problems.push(`item "${item.id}": ${problem}`);
  }
  // A held-out canary lives in held-out text only: elsewhere it would be no proof of a held-out leak.
  top.data.heldoutCanaries.forEach((c, k) => {
    const holders = items.filter((i) => (i.prompt + i.reference).includes(c));
    const outside = holders.filter((i) => i.split !== 'heldout').map((i) => `"${i.id}"`);
    if (holders.length === 0) problems.push(`heldoutCanaries[${k}]: no held-out item's text holds it`);
    if (outside.length > 0) problems.push(`heldoutCanaries[${k}]: ${outside.join(', ')} outside the held-out split hold it`);
    if (top.data.canaries.includes(c)) problems.push(`heldoutCanaries[${k}]: it is also a public canary`);
  });
  if (problems.length > 0) throw malformed(top.data.name, problems);
  return { name: top.data.name, rubrics: top.data.rubrics, canaries: top.data.canaries, heldoutCanaries: top.data.heldoutCanaries, items };
}

/** The refusal naming the first {@link MAX_LISTED} problems (`items[3] "id": path: problem`) and how many more. */
function malformed(name: unknown, problems: string[]): MalformedSuiteError {
  const more = problems.length > MAX_LISTED ? ` and ${problems.length - MAX_LISTED} more` : '';
  const suite = typeof name === 'string' && name.length <= 63 ? ` "${name}"` : '';
  return new MalformedSuiteError(
    `malformed eval suite${suite}, ${problems.length} failing item(s): ${problems.slice(0, MAX_LISTED).join('; ')}${more}`,
  );
}

function crossCheck(item: SuiteItem, byId: Map<string, SuiteItem>, rubrics: Record<string, string>): string | undefined {
  if (item.split === 'probe' && !item.probe) return 'a probe-split item needs `probe: {kind}`';
  if (item.split !== 'probe' && item.probe) return `\`probe\` belongs on probe-split items only, not ${item.split}`;
  if (item.probe && (item.probe.kind === 'perturbed' || item.probe.kind === 'paraphrased')) {
    const of = item.probe.of === undefined ? undefined : byId.get(item.probe.of);
    if (!of) return `a ${item.probe.kind} twin needs \`probe.of\` naming a public item (got ${item.probe.of ?? 'none'})`;
    if (of.split !== 'public') return `\`probe.of\` names "${of.id}", a ${of.split} item, not a public one`;
  }
  if (item.probe?.kind === 'cheat_only' && item.grader.kind !== 'test_program') return 'a cheat-only item needs a test_program grader';
  if (item.grader.kind === 'llm_judge' && rubrics[item.grader.rubric] === undefined)
    return `rubric "${item.grader.rubric}" is not in the suite's rubrics`;
  if (SEALED_SPLITS.includes(item.split) && item.grader.kind === 'llm_judge')
    return `${item.split === 'test' ? 'test' : 'held-out'} items never leave the eval activity, so an external LLM judge cannot grade them`;
  return undefined;
}

export type { GraderConfig };
