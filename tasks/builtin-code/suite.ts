// The built-in code task's eval suite, built from the corpus: public and held-out items (disjoint by file from the
// training text and from each other), probes, held-out canaries, and the sealed test split (cut from files the corpus
// leaves out: no training, public or held-out text comes from them). Deterministic for a corpus and seed; services
// store it once under its content hash (services/suites/built-suite.ts).
import crypto from 'node:crypto';
import { findOverlaps } from '../../core/dataset/overlap';
import type { BuiltSuite, SuiteItemDraft } from '../../core/task';
import { buildCompletionItems, buildLossItems, type CompletionItem } from './eval-items';
import { buildHeldoutCanaries } from './heldout-canaries';
import { buildBuiltinProbes } from './probes';
import { evalSplitFiles, readTrainFiles } from './corpus-cache';
import type { CorpusManifest } from './corpus';
import { BUILTIN_SUITE_LABEL } from './suite-shape';

export interface BuiltinSuiteOptions {
  /** Completion items per eval split (the test split: half as many, rounded up). */
  completions: number;
  /** Loss chunks per eval split (the test split: half as many, rounded up). */
  losses: number;
  seed: number;
}

/** The test split is scored only when production changes, for the record: half a split's items keep that cheap. */
const testCountOf = (n: number) => Math.ceil(n / 2);

export async function buildBuiltinSuite(corpusDir: string, manifest: CorpusManifest, o: BuiltinSuiteOptions): Promise<BuiltSuite> {
  const { completions, losses, seed } = o;
  const corpusHash = manifest.contentSha256;
  const splitFiles = { public: await evalSplitFiles('public'), heldout: await evalSplitFiles('heldout') };
  const built = (['public', 'heldout'] as const).flatMap((split) => {
    const files = splitFiles[split];
    return [
      ...buildCompletionItems(split, files, { count: completions, seed }),
      ...buildLossItems(split, files, { count: losses, seed }),
    ].map((d) => ({ ...d, split }));
  });
  // Files are split disjointly, but code repeats across packages (licence headers, shared helpers): an eval
  // item whose text a training file nearly copies would measure memory, not skill, so it is dropped here.
  // The whole training text is one candidate, so n-grams spread over several files count together.
  // Probes (twins of public completion items, canaries, cheat-only items; probes.ts) are held to
  // the same rule, and a twin goes with its original.
  const publicCompletions = built.filter(
    (d): d is CompletionItem & { split: 'public' } => d.split === 'public' && d.grader === 'exact_token',
  );
  const { probes, canaries } = buildBuiltinProbes(publicCompletions, seed);
  // Held-out canaries (heldout-canaries.ts): held-out items only, derived from the held-out text.
  const heldoutDigest = sha256(JSON.stringify(built.filter((d) => d.split === 'heldout').map((d) => [d.id, d.prompt, d.reference])));
  const heldoutCanaries = buildHeldoutCanaries(seed, heldoutDigest);
  // Built apart from the others, after them: the public and held-out draws (and what derives from them) stay as they were.
  const test = await buildTestItems(built, { completions: testCountOf(completions), losses: testCountOf(losses), seed });
  const all: SuiteItemDraft[] = [
    ...[...built, ...heldoutCanaries.items.map((d) => ({ ...d, split: 'heldout' as const }))].map((d) => ({
      id: d.id,
      split: d.split,
      grader: d.grader,
      category: d.category,
      prompt: d.prompt,
      reference: d.reference,
      sourceFile: d.sourceFile,
      graderConfig: null,
      probe: null,
    })),
    ...probes.map((p) => ({
      id: p.id,
      split: 'probe' as const,
      grader: p.grader.kind,
      category: p.category,
      prompt: p.prompt,
      reference: p.reference,
      sourceFile: p.sourceFile,
      graderConfig: p.grader as Record<string, unknown>,
      probe: p.probe,
    })),
    ...test.map((d) => ({ ...d, split: 'test' as const, graderConfig: null, probe: null })),
  ];
  const { text: train } = readTrainFiles(corpusDir, manifest);
  const leaked = new Set(
    findOverlaps(
      [{ key: 'train', text: train }],
      all.map((d) => ({ id: d.id, text: d.prompt + d.reference })),
    ).flatMap((o) => o.evalIds),
  );
  const items = all.filter((d) => !leaked.has(d.id) && !(d.probe?.of !== undefined && leaked.has(d.probe.of)));
  const heldoutCanaryTexts = heldoutCanaries.canaries.filter((_, k) => !leaked.has(heldoutCanaries.items[k].id));
  const contentHash = sha256(
    JSON.stringify([canaries, heldoutCanaryTexts, items.map((d) => [d.id, d.split, d.prompt, d.reference, d.graderConfig, d.probe])]),
  );
  return {
    name: BUILTIN_SUITE_LABEL,
    contentHash,
    items,
    settings: { corpusHash, droppedForOverlapWithTrain: leaked.size, canaries, heldoutCanaries: heldoutCanaryTexts },
  };
}

/**
 * The sealed test split's items, cut from the files the corpus leaves out (corpus.ts `test`). An item that nearly copies
 * a public or held-out item (code repeats across a package's files) is dropped: what the test split measures must not
 * be what the other splits already showed or chose on.
 */
async function buildTestItems(others: readonly { id: string; prompt: string; reference: string }[], o: BuiltinSuiteOptions) {
  const files = await evalSplitFiles('test');
  const items = [
    ...buildCompletionItems('test', files, { count: o.completions, seed: o.seed }),
    ...buildLossItems('test', files, { count: o.losses, seed: o.seed }),
  ];
  const copies = new Set(
    findOverlaps(
      others.map((d) => ({ key: d.id, text: d.prompt + d.reference })),
      items.map((d) => ({ id: d.id, text: d.prompt + d.reference })),
    ).flatMap((x) => x.evalIds),
  );
  return items.filter((d) => !copies.has(d.id));
}

function sha256(s: string): string {
  return crypto.createHash('sha256').update(s).digest('hex');
}
