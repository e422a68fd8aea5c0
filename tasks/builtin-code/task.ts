// The built-in code-completion task as a Task (core/task.ts): a corpus cut from installed packages (built once per
// FLYWHEEL_HOME), a suite built from its eval splits (suite.ts), a base dataset version of its train split (pieces of
// about 1.5 KB, train-pieces.ts), the corpus's source folders hidden from trainers, simulated users over its train
// lines. Its items are cut from files, so the gate clusters them by source file by default.
import path from 'node:path';
import { NonRetryableError } from '../../core/errors';
import type { BaseVersionDraft, Task } from '../../core/task';
import { BUILTIN_CORPUS_PACKAGES, builtinCorpusSourceDirs, type CorpusManifest } from './corpus';
import { corpusDirOf, ensureCorpus, readTrainFiles } from './corpus-cache';
import { languageOf } from './eval-items';
import { BUILTIN_SEARCH_SPACE } from './search-space';
import { PIECE_BYTES, piecesOf } from './train-pieces';
import { buildBuiltinSuite } from './suite';
import { BUILTIN_SUITE_LABEL, builtinSuiteShape } from './suite-shape';
import { builtinCodeUsers } from './user-rounds';

/**
 * The base version: `<campaign>/code@base-<corpus hash>`, the corpus's train files cut at newlines into pieces of about
 * 1.5 KB (prompt "", category = language, sourceRef = the file), so that a draw by weight is about byte-proportional.
 * Its train.txt, the examples joined by '\n', is the corpus's train text byte for byte.
 */
export function builtinBaseVersion(corpusDir: string, manifest: CorpusManifest): BaseVersionDraft {
  const corpusHash = manifest.contentSha256;
  return {
    datasetName: 'code',
    tag: `base-${corpusHash.slice(0, 12)}`,
    source: 'corpus',
    examples: () =>
      readTrainFiles(corpusDir, manifest).files.flatMap((f) =>
        piecesOf(f.text).map((text) => ({ prompt: '', completion: text, category: languageOf(f.file), sourceRef: f.file })),
      ),
    manifest: { corpusHash, pieceBytes: PIECE_BYTES },
  };
}

export const builtinCodeTask: Task = {
  name: 'builtin-code',
  kind: 'builtin-code',
  selection: { metric: 'bits_per_byte', mode: 'min' },
  suite: { label: BUILTIN_SUITE_LABEL, items: builtinSuiteShape },
  summaryMetrics: [
    { metric: 'bits_per_byte', unit: 'bits/byte', lowerIsBetter: true },
    { metric: 'exact_match', unit: 'exact next token', lowerIsBetter: false },
  ],
  searchSpace: BUILTIN_SEARCH_SPACE,
  // Items are cut from files (36 held-out files, no file giving more than about twice its share): the gate flips each
  // file's items as one.
  itemClusters: 'source',
  // The seed reruns (the held-out leak check's reference) train a charlm recipe with Flywheel's own trainer.
  referenceTrainer: 'builtin',
  async sources({ home, task, seed }) {
    if (task.kind !== 'builtin-code') throw new NonRetryableError(`the built-in code task cannot run a task of kind "${task.kind}"`);
    const corpusDir = corpusDirOf(home);
    const manifest = await ensureCorpus(corpusDir);
    const suite = await buildBuiltinSuite(corpusDir, manifest, { completions: task.completionItems, losses: task.lossItems, seed });
    return { suite: { built: suite }, base: { built: builtinBaseVersion(corpusDir, manifest) } };
  },
  hiddenSources: (repo) => builtinCorpusSourceDirs(path.join(repo, 'node_modules'), BUILTIN_CORPUS_PACKAGES),
  users: ({ home }) => builtinCodeUsers({ corpusDir: corpusDirOf(home) }),
  usersAsk: "lines of the built-in corpus's train split (FLYWHEEL_HOME/corpus)",
  example: { spec: path.join(__dirname, 'builtin-demo.yaml') },
};
