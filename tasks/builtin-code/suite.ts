// The built-in code task's eval suite, built from the corpus: public and held-out items (disjoint by file from the
// training text and from each other), probes, and held-out canaries. Deterministic for a corpus and seed; services
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
  /** Completion items per eval split. */
  completions: number;
  /** Loss chunks per eval split. */
  losses: number;
  seed: number;
}

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

function sha256(s: string): string {
  return crypto.createHash('sha256').update(s).digest('hex');
}
