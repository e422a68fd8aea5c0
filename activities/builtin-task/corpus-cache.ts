// The built-in corpus is built once per FLYWHEEL_HOME: into a temporary folder, then renamed into place,
// so two workers preparing at once never see a half-written corpus.
import fs from 'node:fs';
import path from 'node:path';
import { buildBuiltinCorpus, type CorpusManifest } from './corpus';

export interface CorpusFile {
  file: string;
  text: string;
}

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
  return JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as CorpusManifest;
}

export function readSplit(dir: string, split: 'train' | 'public' | 'heldout'): CorpusFile[] {
  return fs
    .readFileSync(path.join(dir, `${split}.jsonl`), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as CorpusFile);
}
