// Builds the built-in task's corpus from permissively licensed source files already installed under
// node_modules (pinned by package-lock.json), split by file: train.txt for the trainer and a manifest of every
// source and licence on disk; the public and held-out files only in memory, for the eval builders.
// The same lockfile gives the same bytes: sorted walks, fixed caps, no timestamps or absolute paths.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { spareSplitOf, splitOfFile, type SourceFile, type Split } from './eval-items';
import { NonRetryableError } from '../../core/errors';

export interface CorpusPackage {
  /** npm package name. */
  name: string;
  /** Folders inside the package to take files from. */
  dirs: string[];
  /** File extensions to take. */
  ext: string[];
}

/** The sources: real, hand-written TypeScript and JavaScript under MIT licences (checked again at build time). */
export const BUILTIN_CORPUS_PACKAGES: CorpusPackage[] = [
  { name: '@temporalio/activity', dirs: ['src'], ext: ['.ts'] },
  { name: '@temporalio/client', dirs: ['src'], ext: ['.ts'] },
  { name: '@temporalio/common', dirs: ['src'], ext: ['.ts'] },
  { name: '@temporalio/testing', dirs: ['src'], ext: ['.ts'] },
  { name: '@temporalio/workflow', dirs: ['src'], ext: ['.ts'] },
  { name: 'commander', dirs: ['lib'], ext: ['.js'] },
  { name: 'pg', dirs: ['lib'], ext: ['.js'] },
  { name: 'pg-protocol', dirs: ['src'], ext: ['.ts'] },
  { name: 'zod', dirs: ['src/v4/core', 'src/v4/classic', 'src/v4/mini'], ext: ['.ts'] },
];

/** The folders the corpus is cut from: a trainer's sandbox hides them, since their held-out files are eval text. */
export function builtinCorpusSourceDirs(nodeModules: string, packages: CorpusPackage[] = BUILTIN_CORPUS_PACKAGES): string[] {
  return packages.flatMap((p) => p.dirs.map((d) => path.join(nodeModules, p.name, d)));
}

const ALLOWED_LICENSES = new Set(['MIT', 'ISC', 'Apache-2.0', 'BSD-2-Clause', 'BSD-3-Clause', '0BSD']);
/** Tests, type declarations, generated code, benchmarks and translations are not the code we want to model. */
const EXCLUDED = /(\.d\.ts$|\.test\.|\.spec\.|\.generated\.|\/tests?\/|\/__tests__\/|\/testing\/|\/benchmarks?\/|\/locales?\/)/;

export interface BuildCorpusOptions {
  /** @default path.join(__dirname, '..', '..', 'node_modules') */
  nodeModules?: string;
  /** @default BUILTIN_CORPUS_PACKAGES */
  packages?: CorpusPackage[];
  /** A longer file is cut at its last newline before this many bytes. @default 40000 */
  maxFileBytes?: number;
  /** Files of one package are taken in sorted order while they fit under this many bytes. @default 200000 */
  maxPackageBytes?: number;
}

export interface CorpusManifest {
  format: 'flywheel-builtin-corpus-v1';
  /** How train.txt joins its files. */
  separator: string;
  packages: { name: string; version: string; license: string; licenseFile: string; files: number; bytes: number }[];
  splits: Record<Split, { files: number; bytes: number }>;
  files: { file: string; split: Split; bytes: number }[];
  options: { maxFileBytes: number; maxPackageBytes: number };
  /** sha256 of train.txt, public.jsonl and heldout.jsonl, in that order. */
  contentSha256: string;
}

/** The package's licence is not one we may train on, or it ships no licence file. */
export class CorpusLicenseError extends NonRetryableError {}

const SEPARATOR = '\n';

/** The corpus in memory: the training text and every split's files. Held-out text is never written to disk. */
export interface BuiltinCorpus {
  manifest: CorpusManifest;
  trainText: string;
  splits: Record<Split, SourceFile[]>;
  /**
   * Files of the same packages that the package cap leaves out, so no training or public text comes from them, split
   * by file (eval-items.ts spareSplitOf): `heldoutSpare` joins the held-out split's files, `test` is the sealed test
   * split's source. Neither in the manifest nor in its hash (the corpus on disk is unchanged); the suite's content hash
   * covers the items cut from them.
   */
  heldoutSpare: SourceFile[];
  test: SourceFile[];
}

export async function collectBuiltinCorpus(opts: BuildCorpusOptions = {}): Promise<BuiltinCorpus> {
  const nodeModules = opts.nodeModules ?? path.join(__dirname, '..', '..', 'node_modules');
  const maxFileBytes = opts.maxFileBytes ?? 40_000;
  const maxPackageBytes = opts.maxPackageBytes ?? 200_000;
  const packages: CorpusManifest['packages'] = [];
  const sources: SourceFile[] = [];
  const spare: SourceFile[] = [];
  for (const pkg of [...(opts.packages ?? BUILTIN_CORPUS_PACKAGES)].sort((a, b) => cmp(a.name, b.name))) {
    const root = path.join(nodeModules, pkg.name);
    const { version, license, licenseFile } = await readLicense(root, pkg.name);
    let bytes = 0;
    let files = 0;
    for (const dir of pkg.dirs) {
      for (const rel of await walk(path.join(root, dir))) {
        const file = `${pkg.name}/${dir}/${rel}`;
        if (!pkg.ext.some((e) => rel.endsWith(e)) || EXCLUDED.test(`/${dir}/${rel}`)) continue;
        const text = normalise(await fs.readFile(path.join(root, dir, rel), 'utf8'), maxFileBytes);
        const size = Buffer.byteLength(text);
        if (text.trim() === '') continue;
        if (bytes + size > maxPackageBytes) {
          spare.push({ file, text });
          continue;
        }
        bytes += size;
        files += 1;
        sources.push({ file, text });
      }
    }
    packages.push({ name: pkg.name, version, license, licenseFile, files, bytes });
  }

  const splits: Record<Split, SourceFile[]> = { train: [], public: [], heldout: [] };
  for (const s of sources) splits[splitOfFile(s.file)].push(s);
  const trainText = splits.train.map((s) => s.text).join(SEPARATOR);
  const jsonl = (list: SourceFile[]): string => list.map((s) => JSON.stringify({ file: s.file, text: s.text }) + '\n').join('');
  // The hash covers the eval splits too (the same lockfile gives the same suite), computed in memory.
  const hash = createHash('sha256');
  for (const text of [trainText, jsonl(splits.public), jsonl(splits.heldout)]) hash.update(text);
  const splitStats = (list: SourceFile[]) => ({ files: list.length, bytes: list.reduce((n, s) => n + Buffer.byteLength(s.text), 0) });
  const manifest: CorpusManifest = {
    format: 'flywheel-builtin-corpus-v1',
    separator: SEPARATOR,
    packages,
    splits: { train: splitStats(splits.train), public: splitStats(splits.public), heldout: splitStats(splits.heldout) },
    files: sources.map((s) => ({ file: s.file, split: splitOfFile(s.file), bytes: Buffer.byteLength(s.text) })),
    options: { maxFileBytes, maxPackageBytes },
    contentSha256: hash.digest('hex'),
  };
  return {
    manifest,
    trainText,
    splits,
    heldoutSpare: spare.filter((s) => spareSplitOf(s.file) === 'heldout'),
    test: spare.filter((s) => spareSplitOf(s.file) === 'test'),
  };
}

/**
 * Writes the corpus's training side to `outDir`: train.txt and manifest.json. The public and held-out files stay
 * in memory (collectBuiltinCorpus): eval text under FLYWHEEL_HOME is what a trainer could find and learn.
 */
export async function buildBuiltinCorpus(outDir: string, opts: BuildCorpusOptions = {}): Promise<CorpusManifest> {
  const { manifest, trainText } = await collectBuiltinCorpus(opts);
  await fs.mkdir(outDir, { recursive: true });
  await fs.writeFile(path.join(outDir, 'train.txt'), trainText);
  await fs.writeFile(path.join(outDir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  return manifest;
}

async function readLicense(root: string, name: string): Promise<{ version: string; license: string; licenseFile: string }> {
  const pkg = JSON.parse(await fs.readFile(path.join(root, 'package.json'), 'utf8')) as { version?: string; license?: unknown };
  const license = typeof pkg.license === 'string' ? pkg.license : '';
  if (!ALLOWED_LICENSES.has(license))
    throw new CorpusLicenseError(`${name}: licence ${JSON.stringify(pkg.license)} is not on the allowed list`);
  const licenseFile = (await fs.readdir(root)).sort(cmp).find((f) => /^licen[cs]e(\.md|\.txt)?$/i.test(f));
  if (!licenseFile) throw new CorpusLicenseError(`${name}: no LICENSE file in the package`);
  return { version: pkg.version ?? 'unknown', license, licenseFile };
}

/** Files under `dir`, relative, '/'-separated, in byte order (never locale order, which varies by machine). */
async function walk(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  const entries = (await fs.readdir(dir, { withFileTypes: true })).sort((a, b) => cmp(a.name, b.name));
  for (const e of entries) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await walk(path.join(dir, e.name), rel)));
    else if (e.isFile()) out.push(rel);
  }
  return out;
}

/** LF line ends, no BOM, a final newline, and at most `max` bytes cut at a line end. */
function normalise(raw: string, max: number): string {
  let text = raw.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  if (!text.endsWith('\n')) text += '\n';
  if (Buffer.byteLength(text) <= max) return text;
  const cut = Buffer.from(text).subarray(0, max).toString('utf8');
  return cut.slice(0, cut.lastIndexOf('\n') + 1);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
