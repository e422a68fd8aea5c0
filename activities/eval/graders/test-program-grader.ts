// The test-program grader of one scoring batch (a scoreCheckpoint call): it keeps a few tests processes, each running
// one item's tests at a time in a fresh context, and starts a fresh output process per item, so no output shares
// state with another's. Both kinds run sandboxed; where the host cannot make the sandbox, every item is an error and
// nothing runs. Open it per batch, close it after (its processes end with it).
import crypto from 'node:crypto';
import { probeSandbox } from '../../../backends/sandbox/bubblewrap';
import type { GradeOutcome } from '../../../core/graders';
import { TEST_PROGRAM_MAX_MESSAGE, TEST_PROGRAM_MAX_OUTPUT, type TestProgramConfig } from '../../../core/graders/test-program';
import { utf8Prefix } from '../../../core/utf8-prefix';
import { predictScratchRoot } from '../../../services/paths';
import { HarnessProcess } from './harness-process';
import { runTestProgramItem } from './run-test-program';
import { harnessArgv, type HarnessKind } from './test-program-sandbox';

export interface TestProgramGraderOptions {
  /** What no sandbox may show: FLYWHEEL_HOME, predict's scratch root, the task's eval sources (trainerSetupOf's `hide`). */
  hide: string[];
  /** Items graded at once (more wait their turn), each with a tests process of the batch's. @default 2 */
  concurrency?: number;
}

interface TestsProcess {
  proc: HarnessProcess;
  /** Its heap: an item runs in a tests process of its own `memoryMb`. */
  memoryMb: number;
}

export class TestProgramGrader {
  /** Output processes started (one per item) and tests processes started (a few per batch). */
  readonly started = { output: 0, tests: 0 };
  private readonly idle: TestsProcess[] = [];
  private readonly running = new Set<HarnessProcess>();
  private readonly batch = crypto.randomBytes(4).toString('hex');
  private readonly concurrency: number;
  private items = 0;
  private closed = false;
  /** Items in flight, and those waiting for one of them to end. */
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly opts: TestProgramGraderOptions) {
    this.concurrency = opts.concurrency ?? 2;
  }

  async grade(output: string, config: TestProgramConfig): Promise<GradeOutcome> {
    if (this.closed) return { score: 0, error: 'the test-program grader was closed before this item' };
    const probe = probeSandbox();
    if (!probe.ok) return { score: 0, error: `no sandbox for the test program: ${probe.reason}` };
    if (Buffer.byteLength(config.tests) > TEST_PROGRAM_MAX_MESSAGE / 2)
      return { score: 0, error: `the item's tests are longer than ${TEST_PROGRAM_MAX_MESSAGE / 2} bytes` };
    if (this.inFlight >= this.concurrency) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.inFlight++;
    try {
      return await this.gradeNow(output, config);
    } finally {
      this.inFlight--;
      this.waiting.shift()?.();
    }
  }

  private async gradeNow(output: string, config: TestProgramConfig): Promise<GradeOutcome> {
    if (this.closed) return { score: 0, error: 'the test-program grader was closed before this item' };
    const item = ++this.items;
    let tests: TestsProcess | undefined;
    let out: HarnessProcess;
    try {
      tests = this.takeTests(config.memoryMb);
      out = this.start('output', config.memoryMb, `${item}`);
    } catch (e) {
      // The sandbox could not be made after all (a program missing, the host changed since the probe).
      if (tests) this.giveBack(tests, true);
      return { score: 0, error: `no sandbox for the test program: ${(e as Error).message.split('\n')[0]}` };
    }
    try {
      const run = await runTestProgramItem(tests.proc, out, utf8Prefix(output, TEST_PROGRAM_MAX_OUTPUT), config, item);
      this.giveBack(tests, run.testsReusable);
      return run.outcome;
    } finally {
      out.kill();
      this.running.delete(out);
    }
  }

  /** Ends every process of the batch. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.running];
    for (const p of all) p.kill();
    this.idle.length = 0;
    await Promise.all(all.map((p) => p.ended));
  }

  private takeTests(memoryMb: number): TestsProcess {
    const k = this.idle.findIndex((t) => t.memoryMb === memoryMb && t.proc.alive);
    if (k !== -1) return this.idle.splice(k, 1)[0];
    return { proc: this.start('tests', memoryMb, `${++this.started.tests}`), memoryMb };
  }

  private giveBack(tests: TestsProcess, reusable: boolean): void {
    if (reusable && !this.closed) this.idle.push(tests);
    else this.retire(tests.proc);
    while (this.idle.length > this.concurrency) this.retire(this.idle.shift()!.proc);
  }

  private retire(proc: HarnessProcess): void {
    proc.kill();
    this.running.delete(proc);
  }

  private start(kind: HarnessKind, memoryMb: number, n: string): HarnessProcess {
    if (kind === 'output') this.started.output++;
    const argv = harnessArgv(kind, { memoryMb, hide: this.opts.hide, uidKey: `test-program:${this.batch}:${kind}:${n}` });
    const proc = new HarnessProcess(argv, TEST_PROGRAM_MAX_MESSAGE);
    this.running.add(proc);
    return proc;
  }
}

/** Opens a grader for one batch; close it when the batch is graded. */
export function openTestProgramGrader(opts: TestProgramGraderOptions): TestProgramGrader {
  return new TestProgramGrader(opts);
}

/** One item with a grader of its own (tests, a bench's one-off): `hide` defaults to predict's scratch and FLYWHEEL_HOME. */
export async function runTestProgram(output: string, config: TestProgramConfig, hide?: string[]): Promise<GradeOutcome> {
  const home = process.env.FLYWHEEL_HOME;
  const grader = openTestProgramGrader({ hide: hide ?? [predictScratchRoot(), ...(home ? [home] : [])], concurrency: 1 });
  try {
    return await grader.grade(output, config);
  } finally {
    await grader.close();
  }
}
