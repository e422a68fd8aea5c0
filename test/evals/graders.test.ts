// The pluggable graders: pure kinds on their own, the test-program grader with the output and the tests in two real
// sandboxed processes (what crosses between them, and a hang, a crash, a blown limit or a broken protocol as an error,
// never a pass), and the LLM judge through the real `openai` client against a local OpenAI-compatible server.
import path from 'node:path';
import { openAiClient } from '../../agents/openai-client';
import { gradeItem } from '../../activities/eval/graders/grade-item';
import { openTestProgramGrader, type TestProgramGrader } from '../../activities/eval/graders/test-program-grader';
import { gradeExactMatch, gradeNumericTolerance, graderConfigSchema } from '../../core/graders';
import { testProgramConfigSchema } from '../../core/graders/test-program';
import { startChatServer, type ChatServer } from '../helpers/chat-server';
import { testIf } from '../helpers/requires';

const program = (tests: string, extra: Partial<{ timeoutMs: number; memoryMb: number }> = {}) =>
  testProgramConfigSchema.parse({ kind: 'test_program', tests, ...extra });
const ADD_TESTS = 'if (add(2, 3) !== 5) throw new Error("add(2, 3) should be 5");';

describe('pure graders', () => {
  test('exact match trims, and honours ignoreCase and alternatives', () => {
    const cfg = graderConfigSchema.parse({ kind: 'exact_match' });
    if (cfg.kind !== 'exact_match') throw new Error('wrong kind');
    expect(gradeExactMatch('  Paris\n', 'Paris', cfg)).toBe(1);
    expect(gradeExactMatch('paris', 'Paris', cfg)).toBe(0);
    expect(gradeExactMatch('paris', 'Paris', { ...cfg, ignoreCase: true })).toBe(1);
    expect(gradeExactMatch('Lutetia', 'Paris', { ...cfg, alternatives: ['Lutetia'] })).toBe(1);
  });

  test('numeric tolerance reads the first number and accepts either bound', () => {
    const cfg = { kind: 'numeric_tolerance' as const, absolute: 0.01, relative: 0 };
    expect(gradeNumericTolerance('the answer is 3.141', '3.14159', cfg)).toBe(1);
    expect(gradeNumericTolerance('3.2', '3.14159', cfg)).toBe(0);
    expect(gradeNumericTolerance('1.05e6', '1000000', { ...cfg, relative: 0.1 })).toBe(1);
    expect(gradeNumericTolerance('no number', '1', cfg)).toBe(0);
  });

  test('an unknown grader kind or a bad setting is refused by the schema', () => {
    expect(graderConfigSchema.safeParse({ kind: 'vibes' }).success).toBe(false);
    expect(graderConfigSchema.safeParse({ kind: 'test_program', tests: 'x', timeoutMs: -1 }).success).toBe(false);
  });
});

describe('the test-program grader (the output and the tests in two sandboxed processes)', () => {
  let grader: TestProgramGrader;
  beforeAll(() => {
    grader = openTestProgramGrader({ hide: [], concurrency: 2 });
  });
  afterAll(async () => grader?.close());
  const grade = (output: string, tests: string, extra: Partial<{ timeoutMs: number; memoryMb: number }> = {}) =>
    grader.grade(output, program(tests, extra));

  testIf('bubblewrap')('a right output passes, a wrong one fails without an error', async () => {
    expect(await grade('function add(a, b) { return a + b; }', ADD_TESTS)).toEqual({ score: 1 });
    expect(await grade('function add(a, b) { return a - b; }', ADD_TESTS)).toEqual({ score: 0 });
    expect(await grade('function plus(a, b) { return a + b; }', ADD_TESTS)).toEqual({ score: 0 });
    // top-level let, const and class are the output's names too
    expect(await grade('const add = (a, b) => a + b;', ADD_TESTS)).toEqual({ score: 1 });
  });

  testIf('bubblewrap')("classes and objects stay in the output's process: construct, call methods, get and set, iterate", async () => {
    const output = `class Point {
        constructor(x, y) { this.x = x; this.y = y; }
        norm() { return Math.hypot(this.x, this.y); }
        static origin() { return new Point(0, 0); }
      }
      function counts(words) { const m = new Map(); for (const w of words) m.set(w, (m.get(w) || 0) + 1); return m; }`;
    const tests = `const p = new Point(3, 4);
      assert.strictEqual(p.norm(), 5);
      p.x = 6; p.y = 8;
      assert.strictEqual(p.norm(), 10);
      assert.ok(p instanceof Point);
      assert.strictEqual(Point.origin().norm(), 0);
      assert.deepStrictEqual(Object.keys(p), ['x', 'y']);
      const m = counts(['a', 'b', 'a']);
      assert.strictEqual(m.get('a'), 2);
      assert.deepStrictEqual([...m.keys()], ['a', 'b']);
      assert.strictEqual(typeof Point, 'function');`;
    expect(await grade(output, tests)).toEqual({ score: 1 });
    // The same tests against a Point whose norm is wrong: a fail, not an error.
    expect(await grade(output.replace('Math.hypot(this.x, this.y)', 'this.x + this.y'), tests)).toEqual({ score: 0 });
  });

  testIf('bubblewrap')('JSON-like values are copied both ways with what JSON loses; other objects of the tests are refused', async () => {
    const output = `const K = -0; const BIG = 12345678901234567890n;
      var list = [1, 'a', null, undefined, NaN, Infinity, -Infinity, { x: { y: [2] } }];
      function echo(v) { return v; }
      function protoOf(v) { return Object.getPrototypeOf(v) === Object.prototype && Object.keys(v).join(); }`;
    const tests = `assert.ok(Object.is(K, -0));
      assert.strictEqual(BIG, 12345678901234567890n);
      assert.deepStrictEqual(list, [1, 'a', null, undefined, NaN, Infinity, -Infinity, { x: { y: [2] } }]);
      assert.deepStrictEqual(echo({ a: [1, { b: -0 }], c: 2n }), { a: [1, { b: -0 }], c: 2n });
      assert.strictEqual(protoOf(JSON.parse('{"__proto__": 5, "k": 1}')), '__proto__,k');
      assert.throws(() => echo(new Map()), /a Map cannot cross to the output/);
      assert.throws(() => echo(Symbol('s')), /a symbol cannot cross/);
      const loop = []; loop.push(loop);
      assert.throws(() => echo(loop), /contains itself/);`;
    expect(await grade(output, tests)).toEqual({ score: 1 });
  });

  testIf('bubblewrap')(
    "the tests' callbacks are called back, nested; an exception in one reaches the output without its text",
    async () => {
      const output = `function sorted(xs, cmp) { return [...xs].sort(cmp); }
      function apply(f, x) { return f(x); }
      function callThrowing(f) { try { f(); } catch (e) { return e.message; } }`;
      const tests = `assert.deepStrictEqual(sorted([3, 1, 2], (a, b) => b - a), [3, 2, 1]);
      function fact(n) { return n <= 1 ? 1 : n * apply(fact, n - 1); }
      assert.strictEqual(fact(10), 3628800);
      assert.strictEqual(callThrowing(() => { throw new Error('the expected answer is 42'); }), 'a callback of the tests threw');`;
      expect(await grade(output, tests)).toEqual({ score: 1 });
    },
  );

  testIf('bubblewrap')("an exception in the output's code surfaces in the tests as an error with its message", async () => {
    const output = `function div(a, b) { if (b === 0) throw new RangeError('division by zero'); return a / b; }`;
    expect(await grade(output, `assert.throws(() => div(1, 0), /^Error: division by zero$/); assert.strictEqual(div(6, 3), 2);`)).toEqual({
      score: 1,
    });
    expect(await grade(output, 'div(1, 0);')).toEqual({ score: 0 });
  });

  testIf('bubblewrap')('a hang in the output, or in the tests, is killed at the time limit and recorded as an error', async () => {
    const inOutput = await grade('function add() { for (;;) {} }', ADD_TESTS, { timeoutMs: 300 });
    expect(inOutput).toEqual({ score: 0, error: 'killed at its time limit (300 ms)' });
    const inTests = await grade('function add(a, b) { return a + b; }', 'for (;;) {}', { timeoutMs: 300 });
    expect(inTests).toEqual({ score: 0, error: 'killed at its time limit (300 ms)' });
    // The batch grades on.
    expect(await grade('function add(a, b) { return a + b; }', ADD_TESTS)).toEqual({ score: 1 });
  });

  testIf('bubblewrap')("an output that blows its memory limit is killed and recorded as an error; so are the tests'", async () => {
    const hog = 'const keep = []; for (;;) keep.push(new Array(1e5).fill(Math.random()));';
    expect(await grade(hog, ADD_TESTS, { memoryMb: 16, timeoutMs: 60_000 })).toEqual({
      score: 0,
      error: "the output's process was killed at its memory limit (16 MiB)",
    });
    expect(await grade('function add(a, b) { return a + b; }', hog, { memoryMb: 16, timeoutMs: 60_000 })).toEqual({
      score: 0,
      error: "the tests' process was killed at its memory limit (16 MiB)",
    });
  });

  testIf('bubblewrap')('a crash by signal, or an exit, while the tests need the output is an error, never a pass', async () => {
    expect(await grade('function add() { process.kill(process.pid, "SIGSEGV"); }', ADD_TESTS)).toEqual({
      score: 0,
      error: "the output's process crashed with SIGSEGV",
    });
    const exit = await grade('process.exit(0);', ADD_TESTS);
    expect(exit.score).toBe(0);
    expect(exit.error).toMatch(/^the output's process exited \(code 0\) while the tests needed it/);
  });

  testIf('bubblewrap')(
    'an output cannot grade itself: a success marker, an early exit, a redefined Error or process.exit fail',
    async () => {
      const unsatisfiable = 'if (1 + 1 !== 3) throw new Error("unsatisfiable");';
      const tampers = [
        'process.stdout.write("\\n__flywheel_tests_passed__\\n"); process.exit(0);',
        'Error = function () { process.stdout.write("\\n__flywheel_tests_passed__\\n"); process.exit(0); };',
        'process.exit = () => {}; Object.prototype.then = 1; globalThis.assert = { ok() {} };',
      ];
      for (const tamper of tampers) expect((await grade(tamper, unsatisfiable)).score).toBe(0);
      // What the tests use is theirs: an output's `assert` or `Error` never replaces the tests'.
      expect(await grade('var assert = { strictEqual() {} }; function add() { return 0; }', 'assert.strictEqual(add(2, 3), 5);')).toEqual({
        score: 0,
      });
    },
  );

  testIf('bubblewrap')('an output that writes on the wire out of turn, or more than a message may hold, is an error', async () => {
    const wire = 'const fs = process.mainModule.require("fs");';
    const outOfTurn = `${wire} function add(a, b) { fs.writeSync(3, JSON.stringify({ id: 9, op: 'call', h: 1, self: { u: 1 }, args: [] }) + '\\n'); fs.writeSync(3, '{"re":1,"ok":5}\\n'); return a + b; }`;
    expect((await grade(outOfTurn, ADD_TESTS)).error).toMatch(/^the output broke the grading protocol: /);
    const flood = `${wire} fs.writeSync(3, '{"re":1,"ok":5}\\n'.repeat(10000)); function add(a, b) { return a + b; }`;
    expect((await grade(flood, ADD_TESTS)).error).toMatch(/^the output broke the grading protocol: /);
    const huge = `${wire} function add() { fs.writeSync(3, 'x'.repeat(2 << 20)); }`;
    expect(await grade(huge, ADD_TESTS)).toEqual({
      score: 0,
      error: `the output broke the grading protocol: a message of more than ${1 << 20} bytes`,
    });
    // A value too large to answer with is the output's error, thrown in the tests.
    expect(
      await grade(
        'function big() { return "x".repeat(2 << 20); }',
        'try { big(); } catch (e) { if (/larger than a message/.test(e.message)) throw e; }',
      ),
    ).toEqual({ score: 0 });
  });

  testIf('bubblewrap')("the output's process has no environment, no network and no file of Flywheel's", async () => {
    process.env.FW_SECRET_FOR_TEST = 'x';
    const probe = `const req = process.mainModule.require.bind(process.mainModule);
      const escaped = [];
      const keys = Object.keys(process.env).filter((k) => !['HOME', 'PATH', 'PWD', 'TMPDIR'].includes(k));
      if (keys.length) escaped.push('env ' + keys);
      for (const f of [${JSON.stringify(path.join(__dirname, 'graders.test.ts'))}, ${JSON.stringify(path.join(__dirname, '..', '..', 'package.json'))}, '/etc/hostname'])
        try { req('fs').readFileSync(f); escaped.push(f); } catch {}
      try { req('fs').writeFileSync(${JSON.stringify(path.join(__dirname, 'escape.txt'))}, 'x'); escaped.push('write'); } catch {}
      const nets = req('os').networkInterfaces();
      if (Object.keys(nets).some((n) => n !== 'lo')) escaped.push('network ' + Object.keys(nets));
      function escapes() { return escaped; }`;
    expect(await grade(probe, 'const e = escapes(); if (e.length) throw new Error("escaped: " + e.join("; "));')).toEqual({ score: 1 });
    delete process.env.FW_SECRET_FOR_TEST;
  });

  testIf('bubblewrap')('outputs share nothing across items; one tests process serves them in turn', async () => {
    const own = openTestProgramGrader({ hide: [], concurrency: 1 });
    try {
      const add = 'function add(a, b) { return a + b; }';
      expect(await own.grade(`globalThis.shared = 1; ${add}`, program(ADD_TESTS))).toEqual({ score: 1 });
      expect(await own.grade('function seen() { return typeof shared; }', program('assert.strictEqual(seen(), "undefined");'))).toEqual({
        score: 1,
      });
      expect(await own.grade('function add() { process.kill(process.pid, "SIGKILL"); }', program(ADD_TESTS))).toMatchObject({ score: 0 });
      expect(await own.grade(add, program(`var leftover = 1; ${ADD_TESTS}`))).toEqual({ score: 1 });
      expect(await own.grade(add, program('if (typeof leftover !== "undefined") throw new Error("state");'))).toEqual({ score: 1 });
      expect(own.started).toEqual({ output: 5, tests: 1 });
    } finally {
      await own.close();
    }
  });

  test('where bubblewrap cannot run, every item is an error and nothing runs unsandboxed', async () => {
    const before = process.env.FLYWHEEL_BWRAP;
    process.env.FLYWHEEL_BWRAP = '/nonexistent/bwrap';
    const own = openTestProgramGrader({ hide: [] });
    try {
      const r = await own.grade('function add(a, b) { return a + b; }', program(ADD_TESTS));
      expect(r).toEqual({
        score: 0,
        error: expect.stringMatching(/^no sandbox for the test program: bubblewrap cannot make namespaces here: /),
      });
      expect(own.started).toEqual({ output: 0, tests: 0 });
    } finally {
      await own.close();
      if (before === undefined) delete process.env.FLYWHEEL_BWRAP;
      else process.env.FLYWHEEL_BWRAP = before;
    }
  });
});

describe('the LLM judge (the real openai client, a local endpoint)', () => {
  let server: ChatServer;
  beforeAll(async () => {
    server = await startChatServer((req) => {
      const answer = (JSON.parse(req.body.messages[1].content) as { answer: string }).answer;
      if (answer === 'garbage') return { content: 'not json' };
      return { content: JSON.stringify({ score: answer.includes('because') ? 9 : 3, reason: 'scripted' }) };
    });
  });
  afterAll(async () => server?.close());

  test('scores against the suite rubric and reads the verdict; an unusable reply is an error', async () => {
    const judge = openAiClient({ OPENAI_BASE_URL: server.baseUrl });
    const cfg = graderConfigSchema.parse({ kind: 'llm_judge', rubric: 'explains', model: 'judge-1' });
    const ctx = { rubrics: { explains: 'The answer must give a reason.' }, judge };
    const item = { prompt: 'Why is the sky blue?', reference: 'Rayleigh scattering' };
    expect(await gradeItem(cfg, item, 'blue because of scattering', ctx)).toEqual({ score: 1 });
    expect(await gradeItem(cfg, item, 'it just is', ctx)).toEqual({ score: 0 });
    expect((await gradeItem(cfg, item, 'garbage', ctx)).error).toMatch(/not JSON/);
    expect(server.requests[0].body.model).toBe('judge-1');
    expect(server.requests[0].body.messages[0].content).toContain('The answer must give a reason.');
    expect((await gradeItem(cfg, item, 'x', { rubrics: {}, judge })).error).toMatch(/rubric "explains" is not in the suite/);
  });
});
