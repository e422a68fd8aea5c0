// The contract's file names have one home, core/contract-files.ts: the Python trainers' generated copy is up to date,
// the Ray launcher (copied alone to a Ray node, so it keeps its own) names the same files, and no backend, activity
// or trainer writes a name out as a literal.
import fs from 'node:fs';
import path from 'node:path';
import * as names from '../../core/contract-files';
import { CONTRACT_FILES_PY, renderContractFilesPy } from '../../trainers/write-contract-files';

const REPO = path.join(__dirname, '..', '..');
const NAMES: Record<string, string> = { ...names };

test('trainers/torch/contract_files.py is what trainers/write-contract-files.ts renders', () => {
  // On failure: node bin/run-ts.js trainers/write-contract-files.ts
  expect(fs.readFileSync(CONTRACT_FILES_PY, 'utf8')).toBe(renderContractFilesPy());
});

test("the Ray launcher's names are core/contract-files.ts's", () => {
  const text = fs.readFileSync(path.join(REPO, 'backends', 'ray', 'ray-launcher.py'), 'utf8');
  const own = [...text.matchAll(/^([A-Z_]+_(?:FILE|LOG|SUFFIX)) = "([^"]*)"$/gm)].map(([, name, value]) => [name, value]);
  expect(own.length).toBeGreaterThanOrEqual(7);
  expect(own).toEqual(own.map(([name]) => [name, NAMES[name]]));
});

/** The names no one would write for another reason (`cancelled`, `limit`, `checkpoints` are also words and keys). */
const FILE_LIKE = Object.values(NAMES).filter((n) => /[._]/.test(n));

/** Lines of code (comments left out, as far as a line tells) holding a file-like contract name as a literal. */
function literalsIn(file: string): string[] {
  const quoted = new RegExp(`['"\`](${FILE_LIKE.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})['"\`]`);
  const python = file.endsWith('.py');
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .map((line, i) => [line, i + 1] as const)
    .filter(([line]) => !/^\s*(\/\/|\*|\/\*|#)/.test(line) && quoted.test(line))
    .filter(([line]) => !(python && /^[A-Z_]+ = "/.test(line)))
    .map(([line, n]) => `${path.relative(REPO, file)}:${n}: ${line.trim()}`);
}

function filesUnder(dir: string, ext: RegExp): string[] {
  return fs
    .readdirSync(path.join(REPO, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => ext.test(f))
    .map((f) => path.join(REPO, dir, f));
}

test('the backends, activities and trainers name contract files through the constants', () => {
  const files = [
    ...filesUnder('backends', /\.(ts|py)$/),
    ...filesUnder('activities', /\.ts$/),
    ...filesUnder('trainers/charlm', /\.ts$/),
    ...filesUnder('trainers/torch', /\.py$/),
    ...filesUnder('trainers/hf', /\.py$/),
  ].filter((f) => f !== CONTRACT_FILES_PY);
  expect(files.flatMap(literalsIn)).toEqual([]);
});
