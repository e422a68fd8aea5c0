// One test-program item: the output runs in a fresh process of its own, the tests in the batch's tests process, and
// this relays their calls: only the side whose turn it is may speak, an answer only to the innermost pending call,
// no message over the size cap. The verdict is the tests process's (its tests ran to their end without throwing);
// a time limit, a dead output the tests were waiting on, or a protocol violation by the output makes the item an
// error instead, never a pass.
import os from 'node:os';
import type { GradeOutcome } from '../../../core/graders';
import { TEST_PROGRAM_MAX_MESSAGE, type TestProgramConfig } from '../../../core/graders/test-program';
import { TurnTracker } from '../../../core/graders/test-program-turns';
import type { HarnessEnd, HarnessProcess } from './harness-process';

/** How long the tests process has to unwind an item ended under it before it is killed and replaced. */
const ABORT_GRACE_MS = 1000;

export interface ItemRun {
  outcome: GradeOutcome;
  /** Whether the tests process finished the item cleanly and may take the next one. */
  testsReusable: boolean;
}

/** What the tests process reports when an item is over. */
interface Done {
  t: 'done';
  item: number;
  ok: boolean;
  violation?: string;
  compileError?: boolean;
  timedOut?: boolean;
  aborted?: boolean;
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};
const isDone = (m: unknown, item: number): m is Done =>
  typeof m === 'object' && m !== null && (m as Done).t === 'done' && (m as Done).item === item;

/** The signal that ended a process: its own, or the one bubblewrap reports as exit code 128 + n for its child. */
function signalOf(e: HarnessEnd): string | undefined {
  if (e.signal) return e.signal;
  if (e.code === null || e.code <= 128) return undefined;
  return Object.entries(os.constants.signals).find(([, n]) => n === e.code! - 128)?.[0];
}

const lastLine = (stderr: string) => stderr.trim().split('\n').slice(-1)[0]?.slice(0, 200) ?? '';
const error = (text: string): GradeOutcome => ({ score: 0, error: text });

/** How the output's process ended, as the item's error when the tests needed it. */
function outputEnd(e: HarnessEnd, config: TestProgramConfig): string {
  if (/heap out of memory|Allocation failed|out of memory|bad_alloc/i.test(e.stderr))
    return `the output's process was killed at its memory limit (${config.memoryMb} MiB)`;
  const last = lastLine(e.stderr);
  const signal = signalOf(e);
  if (signal) return `the output's process crashed with ${signal}${last ? `: ${last}` : ''}`;
  return `the output's process exited (code ${e.code}) while the tests needed it${last ? `: ${last}` : ''}`;
}

function testsEnd(e: HarnessEnd, config: TestProgramConfig): string {
  if (/heap out of memory|Allocation failed|out of memory|bad_alloc/i.test(e.stderr))
    return `the tests' process was killed at its memory limit (${config.memoryMb} MiB)`;
  return `the tests' process ended (${signalOf(e) ?? `code ${e.code}`})${e.stderr ? `: ${lastLine(e.stderr)}` : ''}`;
}

function verdictOf(m: Done, config: TestProgramConfig): GradeOutcome {
  if (typeof m.violation === 'string') return error(`the output broke the grading protocol: ${m.violation.slice(0, 200)}`);
  if (m.compileError) return error('the tests do not compile (a SyntaxError)');
  if (m.timedOut) return error(`killed at its time limit (${config.timeoutMs} ms)`);
  if (m.aborted) return error('the item was ended before its tests did');
  return { score: m.ok === true ? 1 : 0 };
}

/** Grades `output` (already cut to its budget) against the item's tests; `item` numbers it on the tests' wire. */
export function runTestProgramItem(
  tests: HarnessProcess,
  out: HarnessProcess,
  output: string,
  config: TestProgramConfig,
  item: number,
): Promise<ItemRun> {
  const turns = new TurnTracker();
  let outputGone: string | undefined;
  return new Promise((resolve) => {
    let settled = false;
    /** `tests`: they reported the item `done`, are to `unwind` (mid-item), or broke the protocol and are to be `killed`. */
    const finish = (outcome: GradeOutcome, then: 'done' | 'unwind' | 'killed') => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      out.listen(undefined);
      out.kill();
      if (then === 'killed') tests.kill();
      if (then !== 'unwind' || !tests.alive) {
        tests.listen(undefined);
        return resolve({ outcome, testsReusable: then === 'done' && tests.alive });
      }
      // The tests are mid-item: they unwind on the abort and report; one that does not within the grace is replaced.
      const giveUp = () => {
        tests.listen(undefined);
        tests.kill();
        resolve({ outcome, testsReusable: false });
      };
      const grace = setTimeout(giveUp, ABORT_GRACE_MS);
      tests.listen({
        line: (text) => {
          if (!isDone(parse(text), item)) return;
          clearTimeout(grace);
          tests.listen(undefined);
          resolve({ outcome, testsReusable: true });
        },
        oversize: () => {
          clearTimeout(grace);
          giveUp();
        },
      });
      tests.send({ t: 'abort', item });
    };
    const timer = setTimeout(() => finish(error(`killed at its time limit (${config.timeoutMs} ms)`), 'unwind'), config.timeoutMs);

    out.listen({
      line: (text) => {
        const m = parse(text);
        const wrong = m === undefined ? 'a message that is not JSON' : turns.accept('output', m);
        if (wrong) return finish(error(`the output broke the grading protocol: ${wrong}`), 'unwind');
        tests.send(text);
      },
      oversize: () =>
        finish(error(`the output broke the grading protocol: a message of more than ${TEST_PROGRAM_MAX_MESSAGE} bytes`), 'unwind'),
    });
    tests.listen({
      line: (text) => {
        const m = parse(text);
        if (isDone(m, item)) {
          // A violation the tests' process caught may leave the output's call pending: the output's doing, not theirs.
          if (!turns.idle && typeof m.violation !== 'string')
            return finish(error("the tests' process ended its item with a call pending"), 'killed');
          return finish(verdictOf(m, config), 'done');
        }
        const wrong = m === undefined ? 'a message that is not JSON' : turns.accept('tests', m);
        if (wrong) return finish(error(`the tests' process broke the grading protocol: ${wrong}`), 'killed');
        if (outputGone !== undefined) return finish(error(outputGone), 'unwind');
        out.send(text);
      },
      oversize: () => finish(error(`the tests' process sent a message of more than ${TEST_PROGRAM_MAX_MESSAGE} bytes`), 'killed'),
    });
    void out.ended.then((e) => {
      outputGone = outputEnd(e, config);
      if (turns.testsWaiting) finish(error(outputGone), 'unwind');
    });
    void tests.ended.then((e) => finish(error(testsEnd(e, config)), 'killed'));

    out.send({ t: 'load', source: output });
    tests.send({ t: 'begin', item, tests: config.tests, timeoutMs: config.timeoutMs });
  });
}
