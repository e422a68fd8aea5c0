// The layout is lint, not a convention, and the lint enforces the layout table of docs/architecture.md: for every room, an import of each
// other room is planted where it would live, and ESLint (in one process) must refuse exactly the rooms the table's
// "may import" column leaves out, and pass the ones it names. The CLI, the servers and the activities reach the
// database through services/, so they may import db/client but never db/schema. Planted files are in no TypeScript
// project, so only the type-aware rules are off.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

/** One file of each room that a planted import points at. */
const TARGET: Record<string, string> = {
  contracts: 'contracts/run-id',
  workflows: 'workflows/index',
  activities: 'activities/index',
  services: 'services/paths',
  workers: 'workers/main',
  db: 'db/client',
  core: 'core/errors',
  tasks: 'tasks/index',
  formats: 'formats/charlm/model',
  trainers: 'trainers/charlm/adam',
  temporal: 'temporal/temporal-connection',
  backends: 'backends/backend',
  agents: 'agents/proposer',
  server: 'server/feedback-server',
  stack: 'stack/endpoints',
  cli: 'cli/program',
};

interface Row {
  room: string;
  mayImport: Set<string>;
  /** db/client only: the CLI, the servers and the activities open a pool and hand it to services. */
  dbClientOnly: boolean;
}

/** The layout table's rows for the rooms the lint knows, parsed from docs/architecture.md. */
function layoutTable(): Row[] {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const rows: Row[] = [];
  for (const line of doc.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 5) continue;
    const room = /^`([a-z]+)\//.exec(cells[1])?.[1];
    if (!room || !(room in TARGET)) continue;
    const named = [...cells[3].matchAll(/`([a-z]+)\/([a-z-]*)`/g)];
    const mayImport = new Set(named.map((m) => m[1]).filter((r) => r !== room && r in TARGET));
    const dbNames = named.filter((m) => m[1] === 'db').map((m) => m[2]);
    rows.push({ room, mayImport, dbClientOnly: dbNames.length > 0 && dbNames.every((n) => n === 'client') });
  }
  return rows;
}

/** ESLint's API in a Node process of its own (jest's module sandbox cannot load the ES-module config). */
const LINT_TEXTS = `
const { ESLint } = require('eslint');
const probes = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const off = { '@typescript-eslint/no-floating-promises': 'off', '@typescript-eslint/no-misused-promises': 'off', '@typescript-eslint/await-thenable': 'off' };
const eslint = new ESLint({ overrideConfig: { languageOptions: { parserOptions: { projectService: false, project: null } }, rules: off } });
(async () => {
  const out = [];
  for (const [file, code] of probes) out.push((await eslint.lintText(code, { filePath: file }))[0].messages.map((m) => m.ruleId + ': ' + m.message));
  console.log(JSON.stringify(out));
})();
`;

/** Each probe's problems, as `rule: message`. */
function lintMany(probes: Array<[string, string]>): string[][] {
  const input = JSON.stringify(probes.map(([file, code]) => [path.join(ROOT, file), code]));
  const r = spawnSync(process.execPath, ['-e', LINT_TEXTS], { cwd: ROOT, input, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`eslint failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as string[][];
}

test('docs/architecture.md lists every room the lint knows', () => {
  expect(
    layoutTable()
      .map((r) => r.room)
      .sort(),
  ).toEqual(Object.keys(TARGET).sort());
});

test('for every room, the lint refuses each room the table leaves out and passes each it names', () => {
  const cases: Array<{ from: string; to: string; allowed: boolean }> = [];
  for (const row of layoutTable()) {
    for (const to of Object.keys(TARGET)) {
      if (to === row.room) continue;
      cases.push({ from: row.room, to, allowed: row.mayImport.has(to) });
      // A room allowed db/client alone still may not import the schema.
      if (to === 'db' && row.mayImport.has('db') && row.dbClientOnly) cases.push({ from: row.room, to: 'db/schema', allowed: false });
    }
  }
  const probes = cases.map(({ from, to }): [string, string] => {
    const target = to === 'db/schema' ? 'db/schema' : TARGET[to];
    // services/ may reach tasks/ only from its one door, services/task-registry.ts (a case of its own below).
    const file = from === 'services' && to === 'tasks' ? 'services/task-registry.ts' : `${from}/planted-probe.ts`;
    return [file, `import * as planted from '../${target}';\nexport const probe = planted;\n`];
  });
  const boundary = (problems: string[]) => problems.filter((p) => p.startsWith('import-x/no-restricted-paths: '));
  const results = lintMany(probes).map(boundary);
  const wrong = cases
    .map((c, i) => ({ ...c, refused: results[i].length > 0, message: results[i][0] ?? '' }))
    .filter((c) => c.refused === c.allowed)
    .map(
      (c) =>
        `${c.from} -> ${c.to}: ${c.allowed ? 'allowed by the table, refused by the lint' : 'left out by the table, passed by the lint'}`,
    );
  expect(wrong).toEqual([]);
  // Every refusal cites the page the table lives on.
  const refusal = results.find((m) => m.length > 0)![0];
  expect(refusal).toContain('docs/architecture.md');
  expect(cases.filter((c) => !c.allowed).length).toBeGreaterThan(100);
});

test('services/ reaches tasks/ through services/task-registry.ts only', () => {
  const [other, nested] = lintMany([
    ['services/planted-probe.ts', "import { taskByName } from '../tasks/index';\nexport const probe = taskByName;\n"],
    ['services/suites/planted-probe.ts', "import { taskByName } from '../../tasks/index';\nexport const probe = taskByName;\n"],
  ]);
  expect(other).toEqual([expect.stringContaining('only through services/task-registry.ts')]);
  expect(nested).toEqual([expect.stringContaining('only through services/task-registry.ts')]);
});

test('an import that closes a cycle is refused', () => {
  // core/graders/exact-token.ts imports code-tokens.ts: code-tokens importing it back closes a circle.
  const [problems] = lintMany([
    ['core/graders/code-tokens.ts', "import { gradeExactToken } from './exact-token';\nexport const planted = gradeExactToken;\n"],
  ]);
  expect(problems).toContainEqual(expect.stringMatching(/^import-x\/no-cycle: Dependency cycle detected/));
});

test('an allowed import passes every rule', () => {
  const [problems] = lintMany([
    ['activities/planted.ts', "import { runIdOf } from '../contracts/run-id';\nexport const planted = runIdOf;\n"],
  ]);
  expect(problems).toEqual([]);
});
