// A task's own program in any language (spec `task.users.command`, `task.teacher.command`), spoken to in JSON lines:
// one request object per line on its stdin, one response object per line on its stdout, in order (docs/tasks.md). It
// is the researcher's code, so it runs in the trainers' sandbox (isolate(): no network, FLYWHEEL_HOME hidden, no
// Flywheel secret in its environment, a scratch folder of its own), with a timeout on every answer; a bad answer is
// one line naming the command and the line (`users command line 3: not JSON: …`).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AskCommand } from '../../core/task-command';
import { UsageError } from '../../core/errors';
import { resolveLimits } from '../../core/resource-limits';
import { trainerEnvironment } from '../../core/trainer-environment';
import { isolate } from './sandbox';

/** Which of the task's programs: names it in every error. */
export type TaskCommandRole = 'users' | 'teacher';

export interface JsonLinesCommandOptions {
  role: TaskCommandRole;
  /** The argv (`["python3", "/abs/path/users.py"]`); files it names by absolute path are bound read-only. */
  command: string[];
  /** FLYWHEEL_HOME and anything else the program must not see. */
  hide: string[];
  /** Longest wait for one answer. @default 60000 */
  timeoutMs?: number;
}

/** The program broke the protocol, failed, or took too long: the one-line reason. Retrying the same input cannot help. */
export class TaskCommandError extends UsageError {}

/** A response line longer than this is refused (a runaway program does not fill the worker's memory). */
const MAX_LINE = 8 << 20;
const STDERR_KEEP = 4096;

export class JsonLinesCommand {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly scratch: string;
  private readonly timeoutMs: number;
  private buffer = '';
  private stderr = '';
  private lines: string[] = [];
  private waiting: ((line: string | Error) => void) | undefined;
  private exited: Error | undefined;
  /** Response lines read so far (the next response is line `answered + 1`). */
  private answered = 0;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly o: JsonLinesCommandOptions) {
    this.timeoutMs = o.timeoutMs ?? 60_000;
    if (o.command.length === 0) throw new TaskCommandError(`${o.role} command: is empty`);
    this.scratch = fs.mkdtempSync(path.join(os.tmpdir(), `flywheel-${o.role}-`));
    fs.chmodSync(this.scratch, 0o755);
    let cmd;
    try {
      const limits = resolveLimits({});
      cmd = isolate({
        argv: o.command,
        env: trainerEnvironment(process.env, { env: {}, passEnv: [] }),
        cwd: this.scratch,
        code: [],
        data: [],
        readWrite: [this.scratch],
        hide: o.hide,
        network: false,
        unsandboxed: false,
        limits: { memoryMb: limits.memoryMb, processes: limits.processes, openFiles: limits.openFiles },
        uidKey: this.scratch,
      });
    } catch (e) {
      fs.rmSync(this.scratch, { recursive: true, force: true });
      throw new TaskCommandError(`${o.role} command ${JSON.stringify(o.command)} cannot start: ${(e as Error).message}`);
    }
    this.child = spawn(cmd.argv[0], cmd.argv.slice(1), { cwd: this.scratch, env: cmd.env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (c: Buffer) => this.onStdout(c.toString('utf8')));
    this.child.stderr.on('data', (c: Buffer) => (this.stderr = (this.stderr + c.toString('utf8')).slice(-STDERR_KEEP)));
    // A program that exits early closes its stdin: the write error is reported as its exit, below.
    this.child.stdin.on('error', () => undefined);
    this.child.on('error', (e) =>
      this.fail(new TaskCommandError(`${o.role} command ${JSON.stringify(o.command)} cannot start: ${e.message}`)),
    );
    this.child.on('close', (code, signal) => {
      const last = this.stderr
        .split('\n')
        .filter((l) => l.trim())
        .at(-1);
      this.fail(
        new TaskCommandError(
          `${o.role} command exited (${signal ?? `code ${code}`}) before answering request ${this.answered + 1}${last ? `: ${last.trim().slice(0, 300)}` : ''}`,
        ),
      );
    });
  }

  /**
   * Sends one request and reads its response with `read`, whose thrown message becomes `<role> command line N:
   * <message>`; requests are answered one at a time, in order.
   */
  request<T>(body: Record<string, unknown>, read: (answer: Record<string, unknown>) => T): Promise<T> {
    const next = this.queue.then(() => this.exchange(body, read));
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** `request` as the task's protocol modules (core/command-users.ts, agents/command-teacher.ts) call it. */
  readonly ask: AskCommand = (body, read) => this.request(body, read);

  /** Ends the program (its stdin closed, then killed) and removes its scratch folder. */
  close(): void {
    this.child.stdin.end();
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
    fs.rmSync(this.scratch, { recursive: true, force: true });
  }

  private async exchange<T>(body: Record<string, unknown>, read: (answer: Record<string, unknown>) => T): Promise<T> {
    if (this.exited && this.lines.length === 0) throw this.exited;
    this.child.stdin.write(`${JSON.stringify(body)}\n`);
    const line = await this.nextLine();
    const n = ++this.answered;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (e) {
      throw new TaskCommandError(
        `${this.o.role} command line ${n}: not JSON: ${(e as Error).message} (${JSON.stringify(line.slice(0, 80))})`,
      );
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new TaskCommandError(`${this.o.role} command line ${n}: not a JSON object (${JSON.stringify(line.slice(0, 80))})`);
    const answer = parsed as Record<string, unknown>;
    if (typeof answer.error === 'string')
      throw new TaskCommandError(`${this.o.role} command line ${n}: it answered an error: ${answer.error}`);
    try {
      return read(answer);
    } catch (e) {
      throw new TaskCommandError(`${this.o.role} command line ${n}: ${(e as Error).message}`);
    }
  }

  private nextLine(): Promise<string> {
    const ready = this.lines.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    if (this.exited) return Promise.reject(this.exited);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting = undefined;
        reject(
          new TaskCommandError(`${this.o.role} command did not answer request ${this.answered + 1} within ${this.timeoutMs / 1000} s`),
        );
        this.child.kill('SIGKILL');
      }, this.timeoutMs);
      this.waiting = (got) => {
        clearTimeout(timer);
        this.waiting = undefined;
        if (got instanceof Error) reject(got);
        else resolve(got);
      };
    });
  }

  private onStdout(text: string): void {
    this.buffer += text;
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl).replace(/\r$/, '');
      this.buffer = this.buffer.slice(nl + 1);
      if (line.trim() === '') continue;
      if (this.waiting) this.waiting(line);
      else this.lines.push(line);
    }
    if (this.buffer.length > MAX_LINE) {
      this.fail(new TaskCommandError(`${this.o.role} command line ${this.answered + 1}: longer than ${MAX_LINE} bytes`));
      this.child.kill('SIGKILL');
    }
  }

  private fail(e: Error): void {
    this.exited ??= e;
    this.waiting?.(this.exited);
  }
}
