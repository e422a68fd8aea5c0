// One warm `train --serve` process of a campaign's trainer (core/job-contract.ts TrainRequest), in the same sandbox
// as a one-shot run, with one folder of its own bound read-write (its working directory) instead of a run directory.
// It serves one run at a time: the run gets a fresh folder in the server's (`<serverDir>/<n>`) holding its run.json,
// and the worker records the run's launch directory exactly as the local launcher would (launches.log, job.pid: the
// server's pid, started_at; then the capped logs, trainer_exit, ended_at and exit_code last), so status(), watchEnd,
// cancel() and a reattaching worker read the same files. When the run ends its outputs are copied into its real run
// directory, new files the server never held open, so nothing it writes after the copy reaches a recorded run;
// its folder is then removed. A server that dies mid-run fails that run with its exit status; a cancel, a prune or a
// limit kills the server (local-backend.ts), and the pool (train-servers.ts) starts a fresh one for the next run.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  ENDED_AT_FILE,
  EXIT_CODE_FILE,
  ISOLATION_FILE,
  JOB_PID_FILE,
  LAUNCHES_LOG,
  LIMIT_FILE,
  RUN_JSON,
  STARTED_AT_FILE,
  STDERR_LOG,
  STDOUT_LOG,
  TRAINER_EXIT_FILE,
} from '../../core/contract-files';
import type { TrainRequest } from '../../core/job-contract';
import { parseServeReply, readServeLines } from '../serve-replies';
import { mib, type ResourceLimits } from '../../core/resource-limits';
import { writeAtomic } from '../run-dir-files';
import { copyServedOutputs } from './served-outputs';
import { writeServed } from './served-record';

/** What a killed server's run exits with: 128 + the signal, as the launcher's shell reports it. */
const SIGNAL_CODES: Partial<Record<NodeJS.Signals, number>> = { SIGTERM: 143, SIGKILL: 137, SIGINT: 130, SIGPIPE: 141 };

/** How a server is started, given its folder: its isolated argv and environment, and how it is isolated (isolation.json). */
export type ServerCommand = (serverDir: string) => {
  argv: string[];
  env: Record<string, string>;
  sandbox: 'bubblewrap' | 'none';
  reason?: string;
};

/** One run in flight on a server. */
interface Served {
  id: string;
  runDir: string;
  launchDir: string;
  servedDir: string;
  limits: ResourceLimits | undefined;
  logs: { stdout: Log; stderr: Log };
  ended: Promise<void>;
  end(code: number, error?: string): void;
}

export class TrainServer {
  /** Runs sent to it, failed ones included. */
  served = 0;
  readonly dir: string;
  private readonly child: ChildProcess;
  /** What each run's launch directory records of its isolation: the server's. */
  private readonly isolation: string;
  private exit: string | undefined;
  private current: Served | undefined;

  constructor(
    command: ServerCommand,
    private readonly root: string,
  ) {
    fs.mkdirSync(root, { recursive: true });
    this.dir = fs.mkdtempSync(path.join(root, 's-'));
    let started: ReturnType<ServerCommand>;
    try {
      started = command(this.dir);
    } catch (e) {
      fs.rmSync(this.dir, { recursive: true, force: true });
      throw e;
    }
    this.isolation = JSON.stringify({ sandbox: started.sandbox, ...(started.reason ? { reason: started.reason } : {}), warm: true }) + '\n';
    const [cmd, ...args] = started.argv;
    // Its own process group, as a launcher's: cancel() and the watcher find the run's processes by it.
    this.child = spawn(cmd, args, { cwd: this.dir, env: started.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    this.child.stdin!.on('error', () => {});
    this.child.on('error', (err) => this.ended(`could not start: ${err.message}`, 127));
    // 'close', not 'exit': a reply written just before the process ended is read first, and ends its run as a reply.
    this.child.on('close', (code, signal) =>
      this.ended(signal ? `killed by ${signal}` : `exited with code ${code}`, signal ? (SIGNAL_CODES[signal] ?? 128) : (code ?? 1)),
    );
    readServeLines(
      this.child.stdout!,
      (line) => this.onLine(line),
      () => this.kill(),
    );
    this.child.stderr!.on('data', (c: Buffer) => this.current?.logs.stderr.write(c, () => this.kill()));
    // An idle server never holds its worker's process open.
    this.child.unref();
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) (stream as unknown as { unref?: () => void })?.unref?.();
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Whether it can take another run. */
  get alive(): boolean {
    return this.exit === undefined && this.child.pid !== undefined;
  }

  /**
   * Starts the run whose run.json is in `runDir`, its launch recorded in `launchDir` before this returns. `ended`
   * resolves once the run's end is recorded and the server is free again.
   */
  start(runDir: string, launchDir: string, limits: ResourceLimits | undefined): { ended: Promise<void> } {
    if (this.current) throw new Error('train server: one run at a time');
    if (!this.alive) throw new Error(`train server ${this.exit ?? 'did not start'}`);
    const id = `r${++this.served}`;
    const servedDir = path.join(this.dir, String(this.served));
    // The server may write anything in its folder, a link where the worker is about to make the run's folder
    // included: the folder is made and filled beside the servers' folders, where no sandbox reaches, and moved in
    // whole. A rename never follows a link at its destination (it fails on one), so nothing is written or chowned
    // through the server's links.
    const staged = fs.mkdtempSync(path.join(this.root, '.run-'));
    try {
      // The sandbox may run as a uid of its own (the worker is root): the run's folder is its, as the server's is.
      const owner = fs.statSync(this.dir);
      fs.chownSync(staged, owner.uid, owner.gid);
      fs.copyFileSync(path.join(runDir, RUN_JSON), path.join(staged, RUN_JSON));
      fs.renameSync(staged, servedDir);
    } catch (e) {
      fs.rmSync(staged, { recursive: true, force: true });
      throw e;
    }
    writeServed(launchDir, { serverDir: this.dir, runDir: servedDir });
    writeAtomic(path.join(launchDir, ISOLATION_FILE), this.isolation);
    const keep = limits ? mib(limits.logMb) + 1 : Infinity;
    const logs = { stdout: new Log(path.join(launchDir, STDOUT_LOG), keep), stderr: new Log(path.join(launchDir, STDERR_LOG), keep) };
    fs.appendFileSync(path.join(launchDir, LAUNCHES_LOG), `${this.pid}\n`);
    fs.writeFileSync(path.join(launchDir, JOB_PID_FILE), `${this.pid}\n`);
    fs.writeFileSync(path.join(launchDir, STARTED_AT_FILE), `${seconds()}\n`);
    let end!: (code: number, error?: string) => void;
    const ended = new Promise<void>((resolve) => {
      end = (code, error) => {
        if (this.current?.id !== id) return;
        this.current = undefined;
        // A run whose end cannot be recorded leaves its server suspect: it serves no more.
        void this.finish(run, code, error)
          .catch(() => this.kill())
          .finally(resolve);
      };
    });
    const run: Served = { id, runDir, launchDir, servedDir, limits, logs, ended, end };
    this.current = run;
    const request: TrainRequest = { id, runDir: servedDir };
    this.child.stdin!.write(JSON.stringify(request) + '\n');
    return { ended };
  }

  /** Ends the process (stdin closed, its group killed) and removes its folder. */
  close(): void {
    this.child.stdin!.end();
    this.kill();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  private onLine(line: string): void {
    const run = this.current;
    if (!run) return;
    const reply = parseServeReply(line, run.id);
    if (!reply) return run.logs.stdout.write(Buffer.from(line + '\n'), () => this.kill());
    run.end(reply.ok ? 0 : 1, reply.ok ? undefined : (reply.error ?? 'no reason given'));
  }

  /** The run's end, in the launcher's order: outputs in place, then its exit status, its end time and exit_code last. */
  private async finish(run: Served, code: number, error: string | undefined): Promise<void> {
    if (error) run.logs.stderr.write(Buffer.from(`flywheel: the warm trainer failed this run: ${error.split('\n')[0]}\n`), () => {});
    run.logs.stdout.close();
    run.logs.stderr.close();
    try {
      // Past a disk or file limit nothing is copied, and the server that wrote it serves no more.
      if (!(await copyOut(run))) this.kill();
    } catch (e) {
      // Outputs that cannot be copied (a FIFO, a socket, a full disk) fail the run; the server's state is suspect.
      if (code === 0) code = 1;
      fs.appendFileSync(path.join(run.launchDir, STDERR_LOG), `flywheel: could not copy the run's outputs: ${(e as Error).message}\n`);
      this.kill();
    }
    fs.rmSync(run.servedDir, { recursive: true, force: true });
    writeAtomic(path.join(run.launchDir, TRAINER_EXIT_FILE), `${code}\n`);
    writeAtomic(path.join(run.launchDir, ENDED_AT_FILE), `${seconds()}\n`);
    writeAtomic(path.join(run.launchDir, EXIT_CODE_FILE), `${code}\n`);
  }

  private ended(how: string, code: number): void {
    this.exit ??= how;
    this.current?.end(code, `the server ${how}`);
  }

  /** Its state is unknown after a broken protocol or a failed copy: it takes no further run. */
  private kill(): void {
    if (this.exit === undefined) this.exit = 'was killed';
    try {
      if (this.child.pid !== undefined) process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

/** The run's outputs into its run directory (served-outputs.ts); a breach of its disk or file limit, recorded, stops it. */
async function copyOut(run: Served): Promise<boolean> {
  const breach = await copyServedOutputs(run.servedDir, run.runDir, run.limits);
  if (breach) writeAtomic(path.join(run.launchDir, LIMIT_FILE), JSON.stringify(breach) + '\n');
  return breach === undefined;
}

/** Seconds since the epoch, as the launcher's `date +%s.%N` writes them. */
function seconds(): string {
  return (Date.now() / 1000).toFixed(3);
}

/** A captured log with the launcher's cap: it keeps one byte past `keep - 1`, then calls `over` (the trainer's SIGPIPE). */
class Log {
  private fd: number | undefined;
  private bytes = 0;

  constructor(
    file: string,
    private readonly keep: number,
  ) {
    this.fd = fs.openSync(file, 'a');
  }

  write(chunk: Buffer, over: () => void): void {
    if (this.fd === undefined) return;
    const room = this.keep - this.bytes;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (part.length > 0) fs.writeSync(this.fd, part);
    this.bytes += part.length;
    if (this.bytes >= this.keep) {
      this.close();
      over();
    }
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}
