// The layout is lint, not a convention: ESLint refuses an import across a boundary of ../shared/DESIGN.md's
// "may import" column and any import cycle. Each case plants a file's text where it would live and lints it with the
// repository's own configuration (only the type-aware rules are off: a planted file is in no TypeScript project).
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

/** ESLint's API in a Node process of its own (jest's module sandbox cannot load the ES-module config). */
const LINT_TEXT = `
const { ESLint } = require('eslint');
const [file, code] = JSON.parse(process.argv[1]);
const off = { '@typescript-eslint/no-floating-promises': 'off', '@typescript-eslint/no-misused-promises': 'off', '@typescript-eslint/await-thenable': 'off' };
new ESLint({ overrideConfig: { languageOptions: { parserOptions: { projectService: false, project: null } }, rules: off } })
  .lintText(code, { filePath: file })
  .then(([r]) => console.log(JSON.stringify(r.messages.map((m) => m.ruleId + ': ' + m.message))));
`;

function lint(file: string, code: string): string[] {
  const r = spawnSync(process.execPath, ['-e', LINT_TEXT, JSON.stringify([path.join(ROOT, file), code])], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`eslint failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as string[];
}

test('an activity that imports a workflow is refused', () => {
  const problems = lint(
    'activities/planted.ts',
    "import { innerLoop } from '../workflows/inner-loop';\nexport const planted = innerLoop;\n",
  );
  expect(problems).toEqual([
    expect.stringMatching(/^import-x\/no-restricted-paths: .*"\.\.\/workflows\/inner-loop".*activities\/ may import only/),
  ]);
});

test('a workflow that imports an activity is refused, even for a type', () => {
  const problems = lint(
    'workflows/planted.ts',
    "import type { ActivityDeps } from '../activities/deps';\nexport type Planted = ActivityDeps;\n",
  );
  expect(problems).toEqual([expect.stringMatching(/^import-x\/no-restricted-paths: .*workflows\/ may import only contracts, core/)]);
});

test('core/ imports no task and no model', () => {
  const problems = lint(
    'core/planted.ts',
    "import { BUILTIN_SEARCH_SPACE } from '../tasks/builtin-code/search-space';\nexport const planted = BUILTIN_SEARCH_SPACE;\n",
  );
  expect(problems).toEqual([expect.stringMatching(/^import-x\/no-restricted-paths: .*core\/ may import only itself/)]);
});

test('the CLI reads PostgreSQL through services/, not the schema', () => {
  const problems = lint('cli/planted.ts', "import { campaigns } from '../db/schema';\nexport const planted = campaigns;\n");
  expect(problems).toEqual([expect.stringMatching(/^import-x\/no-restricted-paths: .*services\/ for PostgreSQL/)]);
});

test('an import that closes a cycle is refused', () => {
  // core/graders/exact-token.ts imports code-tokens.ts: code-tokens importing it back closes a circle.
  const problems = lint(
    'core/graders/code-tokens.ts',
    "import { gradeExactToken } from './exact-token';\nexport const planted = gradeExactToken;\n",
  );
  expect(problems).toContainEqual(expect.stringMatching(/^import-x\/no-cycle: Dependency cycle detected/));
});

test('an allowed import passes', () => {
  expect(lint('activities/planted.ts', "import { runIdOf } from '../contracts/run-id';\nexport const planted = runIdOf;\n")).toEqual([]);
});
