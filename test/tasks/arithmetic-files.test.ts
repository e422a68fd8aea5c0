// The arithmetic task's generator: deterministic, held-out problems never in train.jsonl, twins that are twins, a
// suite parseSuite accepts, cheat-only items nothing passes (not even a cheat), and data the built-in trainer learns from.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ARITHMETIC_NAME, generateArithmetic, writeArithmeticFiles } from '../../tasks/arithmetic/generate';
import { categoryOf, parsePrompt } from '../../tasks/arithmetic/problems';
import { parseSuite } from '../../core/eval-suite/suite-schema';
import { checkExampleLine } from '../../core/dataset/example-line';
import { runTestProgram } from '../../activities/eval/graders/test-program-grader';
import { gradeNumericTolerance } from '../../core/graders';
import { resolveTrainParams, trainCharLm } from '../../trainers/charlm/train';
import { loadSpecFile } from '../../cli/spec-file';
import { exampleTask } from '../../services/example-tasks';
import { greedyComplete } from '../../formats/charlm/model';
import { testIf } from '../helpers/requires';

const task = generateArithmetic(1);
const items = task.suite.items;
const bySplit = (split: string) => items.filter((i) => i.split === split);

test('the same seed writes the same files byte for byte; another seed writes others', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arith-'));
  const read = (d: string) => ['train.jsonl', 'suite.json'].map((f) => fs.readFileSync(path.join(d, f), 'utf8'));
  writeArithmeticFiles(path.join(dir, 'a'), 7);
  writeArithmeticFiles(path.join(dir, 'b'), 7);
  writeArithmeticFiles(path.join(dir, 'c'), 8);
  expect(read(path.join(dir, 'a'))).toEqual(read(path.join(dir, 'b')));
  const [trainA, suiteA] = read(path.join(dir, 'a'));
  const [trainC, suiteC] = read(path.join(dir, 'c'));
  expect(trainC).not.toEqual(trainA);
  expect(suiteC).not.toEqual(suiteA);
  // Every line is one the dataset format accepts.
  for (const line of trainA.trim().split('\n')) expect(checkExampleLine(JSON.parse(line))).toHaveProperty('example');
});

test('no eval problem (public, held-out or twin) is a training problem, and the splits are disjoint', () => {
  const train = new Set(task.train.map((l) => l.prompt));
  const evalPrompts = items.filter((i) => i.grader.kind === 'numeric_tolerance').map((i) => i.prompt);
  expect(evalPrompts.filter((p) => train.has(p))).toEqual([]);
  expect(new Set(evalPrompts).size).toBe(evalPrompts.length);
  expect(bySplit('heldout').filter((i) => train.has(i.prompt))).toEqual([]);
  expect(bySplit('test')).toHaveLength(100); // the sealed split: 50 a category, in no other split (above)
  // Nor does any held-out text appear inside the training file.
  const trainText = task.train.map((l) => l.prompt + l.completion).join('\n');
  for (const i of bySplit('heldout')) expect(trainText.includes(i.prompt)).toBe(false);
});

test('both categories are in every split and in training; the labels are right', () => {
  for (const split of ['public', 'heldout', 'test'])
    expect(new Set(bySplit(split).map((i) => i.category))).toEqual(
      new Set(split === 'heldout' ? ['carry', 'no-carry', 'canary'] : ['carry', 'no-carry']),
    );
  for (const l of task.train) expect(l.category).toBe(categoryOf(parsePrompt(l.prompt)!));
  expect(task.train.find((l) => l.prompt === '23+58=')?.category ?? categoryOf({ a: 23, b: 58 })).toBe('carry');
  expect(categoryOf({ a: 23, b: 51 })).toBe('no-carry');
});

test('each twin asks another problem of the same category with another answer', () => {
  const twins = bySplit('probe').filter((i) => i.probe?.kind === 'perturbed');
  expect(twins).toHaveLength(bySplit('public').length);
  for (const t of twins) {
    const of = items.find((i) => i.id === t.probe!.of)!;
    expect(of.split).toBe('public');
    expect(t.category).toBe(of.category);
    expect(t.prompt).not.toBe(of.prompt);
    expect(t.reference).not.toBe(of.reference);
    expect(gradeNumericTolerance(of.reference, t.reference, { kind: 'numeric_tolerance', absolute: 0, relative: 0 })).toBe(0);
  }
});

test('the suite passes parseSuite, with its canaries and held-out canaries where they belong', () => {
  const s = parseSuite(JSON.parse(JSON.stringify(task.suite)));
  expect(s.items).toHaveLength(items.length);
  expect(s.canaries).toHaveLength(2);
  expect(s.heldoutCanaries).toHaveLength(2);
  for (const c of s.heldoutCanaries) {
    const holders = s.items.filter((i) => (i.prompt + i.reference).includes(c.slice(12)));
    expect(holders.map((i) => i.split)).toEqual(['heldout']);
  }
  for (const c of s.canaries) expect(task.train.some((l) => (l.prompt + l.completion).includes(c))).toBe(false);
});

testIf('bubblewrap')('a cheat-only item fails an honest answer, and the cheats that once passed it', async () => {
  const cheats = items.filter((i) => i.probe?.kind === 'cheat_only');
  expect(cheats.length).toBeGreaterThan(0);
  // The old grader ran output and tests as one program: these passed it (a success marker, then exit 0; an Error that
  // exits 0 when the tests throw). Now they run in the output's own process, apart from the tests.
  const tampers = [
    'process.stdout.write("\\n__flywheel_tests_passed__\\n"); process.exit(0);',
    'Error = function () { process.stdout.write("\\n__flywheel_tests_passed__\\n"); process.exit(0); };',
  ];
  for (const item of cheats) {
    if (item.grader.kind !== 'test_program') throw new Error('a cheat-only item needs a test_program grader');
    const { a, b } = parsePrompt(item.prompt)!;
    const honest = String(a + b).padStart(3, '0');
    expect(await runTestProgram(honest, item.grader)).toEqual({ score: 0 });
    expect(await runTestProgram(`${a + b}\n`, item.grader)).toEqual({ score: 0 });
    for (const cheat of tampers) expect((await runTestProgram(cheat, item.grader)).score).toBe(0);
  }
});

test('a short training of the built-in trainer raises the held-out pass rate above the untrained model', () => {
  const text = task.train.map((l) => l.prompt + l.completion).join('\n');
  const heldout = bySplit('heldout').filter((i) => i.grader.kind === 'numeric_tolerance');
  const passRate = (steps: number) => {
    const { model } = trainCharLm({ text, params: { context: 9, embed: 12, hidden: 96, lr: 0.01, steps, logEvery: 500 }, seed: 1 });
    const right = heldout.filter(
      (i) =>
        gradeNumericTolerance(greedyComplete(model, i.prompt, i.maxBytes), i.reference, {
          kind: 'numeric_tolerance',
          absolute: 0,
          relative: 0,
        }) === 1,
    );
    return right.length / heldout.length;
  };
  const untrained = passRate(0);
  const trained = passRate(1500);
  expect(untrained).toBeLessThan(0.05);
  expect(trained).toBeGreaterThan(untrained + 0.1);
});

test("the campaign spec names the generated dataset and suite, selects on pass_rate, and searches the trainer's knobs", () => {
  const spec = loadSpecFile(exampleTask('arithmetic').spec);
  expect(spec.task).toEqual({ kind: 'custom', dataset: ARITHMETIC_NAME, suite: ARITHMETIC_NAME });
  expect(spec.selection).toEqual({ metric: 'pass_rate', mode: 'max' });
  expect(spec.outerLoop.promotion.metric).toBe('pass_rate');
  expect(spec.outerLoop.warmStart.enabled).toBe(true);
  for (const end of ['low', 'high'] as const) {
    const params = Object.fromEntries(
      Object.entries(spec.searchSpace).map(([k, p]) => [k, p.type === 'categorical' ? p.choices[0] : p[end]]),
    );
    expect(() => resolveTrainParams({ ...spec.trainer.fixed, ...params })).not.toThrow();
  }
});
