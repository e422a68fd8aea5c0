// The pluggable graders: pure kinds on their own, the test-program grader in a real child process (a hang, a
// crash and a blown memory limit are errors, never passes), and the LLM judge through the real `openai` client
// against a local OpenAI-compatible server.
import { openAiClient } from '../../agents/openai-client';
import { gradeItem } from '../../activities/eval/graders/grade-item';
import { runTestProgram } from '../../activities/eval/graders/run-test-program';
import { gradeExactMatch, gradeNumericTolerance, graderConfigSchema } from '../../core/graders';
import { testProgramConfigSchema } from '../../core/graders/test-program';
import { startChatServer, type ChatServer } from '../helpers/chat-server';

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

describe('the test-program grader (a real child process)', () => {
  test('a right output passes, a wrong one fails without an error', async () => {
    expect(await runTestProgram('function add(a, b) { return a + b; }', program(ADD_TESTS))).toEqual({ score: 1 });
    expect(await runTestProgram('function add(a, b) { return a - b; }', program(ADD_TESTS))).toEqual({ score: 0 });
  });

  test('an output that exits before the tests run does not pass', async () => {
    expect(await runTestProgram('process.exit(0);', program(ADD_TESTS))).toEqual({ score: 0 });
  });

  test('a hang is killed at the time limit and recorded as an error', async () => {
    const r = await runTestProgram('function add() { for (;;) {} }', program(ADD_TESTS, { timeoutMs: 300 }));
    expect(r.score).toBe(0);
    expect(r.error).toMatch(/killed at its time limit \(300 ms\)/);
  });

  test('a program that blows its memory limit is killed and recorded as an error', async () => {
    const hog = 'const keep = []; for (;;) keep.push(new Array(1e5).fill(Math.random()));';
    const r = await runTestProgram(hog, program(ADD_TESTS, { memoryMb: 16, timeoutMs: 60_000 }));
    expect(r.score).toBe(0);
    expect(r.error).toMatch(/memory limit \(16 MiB\)/);
  });

  test('a crash by signal is an error, not a pass', async () => {
    const r = await runTestProgram('process.kill(process.pid, "SIGSEGV");', program(ADD_TESTS));
    expect(r.score).toBe(0);
    expect(r.error).toMatch(/crashed with SIGSEGV/);
  });

  test('the child cannot read files, spawn processes or see the environment', async () => {
    process.env.FW_SECRET_FOR_TEST = 'x';
    const probe = `
      let escaped = [];
      try { require('fs').readFileSync('/etc/hostname'); escaped.push('fs'); } catch {}
      try { require('child_process').execSync('true'); escaped.push('spawn'); } catch {}
      if (process.env.FW_SECRET_FOR_TEST) escaped.push('env');
      if (escaped.length) throw new Error('escaped: ' + escaped.join(','));`;
    expect(await runTestProgram(probe, program('/* nothing */'))).toEqual({ score: 1 });
    delete process.env.FW_SECRET_FOR_TEST;
  });

  test('unsatisfiable tests pass only for an output that tampers with the program', async () => {
    const unsatisfiable = program('if (1 + 1 !== 3) throw new Error("unsatisfiable");');
    expect(await runTestProgram('function add(a, b) { return a + b; }', unsatisfiable)).toEqual({ score: 0 });
    const tamper = 'process.stdout.write("\\n__flywheel_tests_passed__\\n"); process.exit(0);';
    expect(await runTestProgram(tamper, unsatisfiable)).toEqual({ score: 1 });
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
