// The built-in task's base version goes through the one version writer: its train.txt is the corpus's train text
// byte for byte (as before the writer existed), its train.jsonl one piece of a corpus file a line (about 1.5 KB, cut at
// a newline: train-pieces.ts), its rows carry prompt "" and completion = the piece's text.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { ensureBaseVersion } from '../../services/datasets/base-version';
import { builtinBaseVersion } from '../../tasks/builtin-code/task';
import { piecesOf } from '../../tasks/builtin-code/train-pieces';
import type { DbHandle } from '../../db/client';
import { datasets, datasetVersions, examples } from '../../db/schema';
import type { CorpusManifest } from '../../tasks/builtin-code/corpus';
import { freshDatabase, scratchDir } from '../helpers/env';

const home = scratchDir('builtin-base');
let h: DbHandle;
const sha = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

beforeAll(async () => {
  ({ handle: h } = await freshDatabase('builtin_base'));
});
afterAll(async () => {
  await h?.close();
});

test('train.txt is the corpus train text; train.jsonl and the rows hold each piece of a file as a completion', async () => {
  const corpusDir = scratchDir('builtin-base-corpus');
  const long = Array.from({ length: 60 }, (_, i) => `export const value${i} = ${'x'.repeat(30)}; // line ${i}\n`).join('');
  const files = [
    { file: 'pkg/a.ts', text: 'export const a = 1;\n' },
    { file: 'pkg/b.js', text: 'module.exports = function b() {\n  return "b\\n";\n};\n' },
    { file: 'pkg/c.ts', text: 'export const a = 1;\n' },
    { file: 'pkg/d.ts', text: long },
  ];
  const pieces = piecesOf(long);
  expect(pieces).toHaveLength(Math.round(long.length / 1536));
  expect(pieces.length).toBeGreaterThan(1);
  const text = files.map((f) => f.text).join('\n');
  fs.writeFileSync(path.join(corpusDir, 'train.txt'), text);
  const manifest = {
    separator: '\n',
    files: files.map((f) => ({ file: f.file, split: 'train', bytes: Buffer.byteLength(f.text) })),
    contentSha256: sha('corpus'),
  } as unknown as CorpusManifest;

  const versionId = await ensureBaseVersion(h.db, home, 'c1', builtinBaseVersion(corpusDir, manifest));
  expect(versionId).toBe(`c1/code@base-${sha('corpus').slice(0, 12)}`);
  const [v] = await h.db.select().from(datasetVersions).where(eq(datasetVersions.id, versionId));
  expect(v).toMatchObject({ datasetId: 'c1/code', parentIds: [], countsBySource: { corpus: 3 + pieces.length }, contentHash: sha(text) });
  expect(fs.readFileSync(path.join(v.path, 'train.txt'), 'utf8')).toBe(text);
  const jsonl = fs.readFileSync(path.join(v.path, 'train.jsonl'), 'utf8').trimEnd().split('\n');
  const line = (file: string, completion: string) => ({
    prompt: '',
    completion,
    category: file.endsWith('.js') ? 'javascript' : 'typescript',
    weight: 1,
    source: 'corpus',
  });
  expect(jsonl.map((l) => JSON.parse(l) as unknown)).toEqual([
    ...files.slice(0, 3).map((f) => line(f.file, f.text)),
    ...pieces.map((p) => line('pkg/d.ts', p)),
  ]);
  const rows = await h.db.select().from(examples).where(eq(examples.datasetVersionId, versionId));
  // Two files with one text are one example row, as before.
  expect(rows.map((r) => [r.sourceRef, r.prompt, r.completion, r.content, r.category]).sort()).toEqual(
    [
      ['pkg/a.ts', '', files[0].text, files[0].text, 'typescript'],
      ['pkg/b.js', '', files[1].text, files[1].text, 'javascript'],
      ...pieces.map((p) => ['pkg/d.ts', '', p, p, 'typescript']),
    ].sort(),
  );
  const [d] = await h.db.select().from(datasets).where(eq(datasets.id, 'c1/code'));
  expect(d).toMatchObject({ campaignId: 'c1', name: 'code' });
  expect(await ensureBaseVersion(h.db, home, 'c1', builtinBaseVersion(corpusDir, manifest))).toBe(versionId);
});
