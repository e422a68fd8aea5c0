// The built-in corpus's training side is built once per FLYWHEEL_HOME: into a temporary folder, then renamed into
// place, so two workers preparing at once never see a half-written corpus. Its eval splits are never written.
import fs from 'node:fs';
import path from 'node:path';
import { buildBuiltinCorpus, collectBuiltinCorpus, type BuiltinCorpus, type CorpusManifest } from './corpus';

export interface CorpusFile {
  file: string;
  text: string;
}

/** Where the corpus of a FLYWHEEL_HOME lives. */
export const corpusDirOf = (home: string) => path.join(home, 'corpus');

export async function ensureCorpus(dir: string): Promise<CorpusManifest> {
  const manifestFile = path.join(dir, 'manifest.json');
  if (!fs.existsSync(manifestFile)) {
    const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
    await buildBuiltinCorpus(tmp);
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    try {
      fs.renameSync(tmp, dir);
    } catch {
      fs.rmSync(tmp, { recursive: true, force: true }); // another process won the race
    }
  }
  // A corpus built by an earlier Flywheel kept its eval splits beside train.txt: they go.
  for (const stale of ['public.jsonl', 'heldout.jsonl']) fs.rmSync(path.join(dir, stale), { force: true });
  return JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as CorpusManifest;
}

/** The training files, cut out of train.txt by the byte lengths the manifest lists in order. */
export function readTrainFiles(dir: string, manifest: CorpusManifest): { text: string; files: CorpusFile[] } {
  const buf = fs.readFileSync(path.join(dir, 'train.txt'));
  const sep = Buffer.byteLength(manifest.separator);
  const files: CorpusFile[] = [];
  let at = 0;
  for (const f of manifest.files.filter((x) => x.split === 'train')) {
    files.push({ file: f.file, text: buf.subarray(at, at + f.bytes).toString('utf8') });
    at += f.bytes + sep;
  }
  return { text: buf.toString('utf8'), files };
}

let collected: Promise<BuiltinCorpus> | undefined;

/**
 * One eval split's source files, rebuilt in memory from the installed packages (the same lockfile gives the same
 * bytes) and kept for the life of the process, never on disk. Held-out: the corpus's held-out files and its share of
 * the files the package cap leaves out (corpus.ts heldoutSpare).
 */
export async function evalSplitFiles(split: 'public' | 'heldout' | 'test'): Promise<CorpusFile[]> {
  collected ??= collectBuiltinCorpus();
  const corpus = await collected;
  if (split === 'heldout') return [...corpus.splits.heldout, ...corpus.heldoutSpare];
  return split === 'test' ? corpus.test : corpus.splits[split];
}
