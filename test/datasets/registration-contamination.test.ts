// `registerDataset` checks the new version against every registered suite before it writes anything, with the loop's
// own rule (core/dataset/contamination.ts): held-out and probe items (exact or near copies) and canaries refuse the
// file at its first such line; public items are left to the loop, as before. Real PostgreSQL.
import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { checkContamination } from '../../activities/eval/check-contamination';
import type { DbHandle } from '../../db/client';
import { heldoutReads } from '../../db/schema';
import { ContaminatedLineError, MalformedDatasetError, registerDataset } from '../../services/datasets/register-dataset';
import { registerEvalSuite } from '../../services/suites/register-suite';
import { freshDatabase, scratchDir } from '../helpers/env';
import { datasetWrites, HELDOUT_ITEM, PUBLIC_ITEM, RING_ITEM } from '../helpers/registration-texts';

const home = scratchDir('registration-contamination');
const files = scratchDir('registration-contamination-files');
let h: DbHandle;

function writeFile(name: string, lines: (object | string)[]): string {
  const file = path.join(files, name);
  fs.writeFileSync(file, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
  return file;
}
const written = () => datasetWrites(h.db, home);

beforeAll(async () => {
  ({ handle: h } = await freshDatabase('registration_contamination'));
  await registerEvalSuite(h.db, {
    name: 'code',
    items: [
      { id: 'p1', split: 'public', grader: { kind: 'exact_match' }, ...PUBLIC_ITEM },
      { id: 'h1', split: 'heldout', grader: { kind: 'exact_match' }, ...HELDOUT_ITEM },
      { id: 'x1', split: 'probe', grader: { kind: 'exact_match' }, probe: { kind: 'paraphrased', of: 'p1' }, ...RING_ITEM },
    ],
  });
});
afterAll(async () => h?.close());

test('a near copy of a held-out item (re-indented, one word changed) is refused at its line; nothing written', async () => {
  const before = await written();
  const near = HELDOUT_ITEM.prompt.replace('title', 'name').replace(/\n/g, '\n    ');
  const file = writeFile('near.jsonl', [
    { prompt: 'Q: 1+1=', completion: '2' },
    { prompt: 'Write slugify.\n', completion: near + HELDOUT_ITEM.reference },
  ]);
  const err = await registerDataset(h.db, 'near', file, { home }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ContaminatedLineError);
  expect((err as Error).message).toMatch(
    new RegExp(`^${file}:2: completion: overlaps held-out item code@1/h1 \\(13-gram "export functi"\\)$`),
  );
  expect(await written()).toEqual(before);
});

test('the first contaminated line is named; a malformed line anywhere is reported first', async () => {
  const probe = { prompt: RING_ITEM.prompt, completion: RING_ITEM.reference };
  const held = { prompt: '', completion: HELDOUT_ITEM.prompt + HELDOUT_ITEM.reference };
  const ok = (i: number) => ({ prompt: `${i}`, completion: 'x' });
  const file = writeFile('two.jsonl', [ok(1), ok(2), probe, ok(3), held]);
  await expect(registerDataset(h.db, 'two', file, { home })).rejects.toThrow(
    `${file}:3: prompt: overlaps probe item code@1/x1 (13-gram "class RingBuf")`,
  );
  const broken = writeFile('broken.jsonl', [ok(1), probe, '{"prompt": "no completion"}']);
  const err = await registerDataset(h.db, 'broken', broken, { home }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(MalformedDatasetError);
  expect((err as MalformedDatasetError).problems).toEqual([`${broken}:3: completion: Invalid input: expected string, received undefined`]);
});

test("the check reads every suite's held-out items through the logged read", async () => {
  await registerDataset(h.db, 'logged', writeFile('logged.jsonl', [{ prompt: 'a', completion: 'b' }]), { home });
  const reads = await h.db.select().from(heldoutReads).where(eq(heldoutReads.reader, 'checkContamination:dataset add logged'));
  expect(reads).toMatchObject([{ suiteId: 'code@1', purpose: 'contamination' }]);
});

test("public items are the loop's to refuse, as before: the version registers, and the loop's check names it", async () => {
  const file = writeFile('public.jsonl', [{ prompt: PUBLIC_ITEM.prompt, completion: PUBLIC_ITEM.reference }]);
  const r = await registerDataset(h.db, 'public', file, { home });
  expect(r).toMatchObject({ created: true, examples: 1 });
  await expect(checkContamination({ db: h.db, home }, { datasetVersionId: r.versionId, reader: 'public/inner/1' })).rejects.toThrow(
    /public\.jsonl:1 contains code@1\/p1 \(public\)/,
  );
});
