// One warm inference process for one Hugging Face checkpoint: started on the HF environment's interpreter, ready
// once it answers /health, counted in-flight requests, and stopped only after they have finished.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { FlywheelError, NonRetryableError } from '../../core/errors';
import path from 'node:path';
import { freePort } from '../http/free-port';
import { inferenceArgv, type InferenceEngine } from './inference-engine';
import { InferenceConnectionError, isHealthy, openAiComplete, type OpenAiCompletion } from './openai-completions';

export interface InferenceProcessOptions {
  /** The HF environment's interpreter (stack/hf-env.ts hfPython). */
  python: string;
  engine: InferenceEngine;
  /** The checkpoint folder (already verified against its digest). */
  folder: string;
  /** The checkpoint id: the served model's name. */
  name: string;
  /** FLYWHEEL_HOME: the process logs to `<home>/logs/serve-<name>.log`. */
  home: string;
  /** How long loading may take before the start counts as failed. @default 600000 (vLLM compiles on start) */
  readyTimeoutMs?: number;
  /** How long `stop()` waits for in-flight requests before stopping anyway. @default 120000 */
  drainMs?: number;
  /** Flywheel's server: requests generated together at most. @default 8 */
  maxBatch?: number;
  /** Called once if the process exits without being asked to. */
  onCrash?: (p: InferenceProcess, how: string) => void;
}

/** The folder may not be served (code in it, an auto_map, pickled weights): serve.py exited 2 with this line. */
export class UnservableCheckpointError extends NonRetryableError {}

/** The process did not come up (crashed while loading, or never answered /health). */
export class InferenceStartError extends FlywheelError {}

/** The process died while a request was in flight: the request may be sent again to a new one. */
export class InferenceExitedError extends FlywheelError {}

export class InferenceProcess {
  /** Requests sent and not yet answered. */
  private inFlight = 0;
  private drained?: () => void;
  private stopping = false;
  /** Answered /health once: an exit from here on is a crash, not a failed start. */
  private live = false;
  private exitedHow?: string;
  private readonly exit: Promise<void>;

  private constructor(
    private readonly o: Required<Omit<InferenceProcessOptions, 'onCrash'>> & Pick<InferenceProcessOptions, 'onCrash'>,
    private readonly child: ChildProcess,
    readonly url: string,
    readonly logFile: string,
    /** Where this start's lines begin in the log file. */
    private readonly logOffset: number,
  ) {
    this.exit = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.exitedHow = signal ? `signal ${signal}` : `exit code ${code}`;
        if (this.live && !this.stopping) this.o.onCrash?.(this, this.exitedHow);
        resolve();
      }),
    );
  }

  get pid(): number {
    return this.child.pid!;
  }
  get name(): string {
    return this.o.name;
  }
  get engine(): InferenceEngine {
    return this.o.engine;
  }
  /** Takes new requests: started, not stopping, not exited. */
  get usable(): boolean {
    return !this.stopping && this.exitedHow === undefined;
  }

  /** Spawns the process and resolves once it answers /health; rejects with one line when it cannot. */
  static async start(opts: InferenceProcessOptions): Promise<InferenceProcess> {
    const o = { readyTimeoutMs: 600_000, drainMs: 120_000, maxBatch: 8, ...opts };
    if (!fs.existsSync(o.python))
      throw new InferenceStartError(
        `${o.python}: no such interpreter: install the HF environment (bash .ci/install-hf.sh) or set FLYWHEEL_HF_PYTHON`,
      );
    const host = '127.0.0.1';
    const port = await freePort(host);
    const log = openLog(o.home, `serve-${o.name.replace(/[^A-Za-z0-9._-]+/g, '_')}`);
    let child: ChildProcess;
    try {
      const argv = inferenceArgv(o.engine, { folder: o.folder, name: o.name, host, port, parentPid: process.pid, maxBatch: o.maxBatch });
      child = spawn(o.python, argv, { stdio: ['ignore', log.fd, log.fd], env: { ...process.env, PYTHONUNBUFFERED: '1' } });
    } finally {
      fs.closeSync(log.fd);
    }
    const p = new InferenceProcess(o, child, `http://${host}:${port}`, log.path, log.offset);
    child.once('error', () => undefined); // a spawn failure shows as the exit below
    await p.ready(o.readyTimeoutMs);
    return p;
  }

  private async ready(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.exitedHow !== undefined) {
        const line = this.lastLogLine() || `the process ended (${this.exitedHow})`;
        const status = this.child.exitCode;
        // The client sees the checkpoint's id, never the server's paths.
        if (status === 2)
          throw new UnservableCheckpointError(
            `checkpoint "${this.name}": ${line
              .replace(/^serve\.py: /, '')
              .split(`${this.o.folder}: `)
              .join('')
              .split(`${this.o.folder}/`)
              .join('')}`,
          );
        throw new InferenceStartError(`inference process for checkpoint "${this.name}" failed to start: ${line}`);
      }
      if (await isHealthy(this.url)) {
        this.live = true;
        return;
      }
      if (Date.now() > deadline) {
        await this.stop();
        throw new InferenceStartError(
          `inference process for checkpoint "${this.name}" did not answer ${this.url}/health within ${Math.round(timeoutMs / 1000)} s (log: ${this.logFile})`,
        );
      }
      await Promise.race([sleep(250), this.exit]);
    }
  }

  /** A greedy completion of at most `maxTokens` tokens. Counted in-flight from the call on, so `stop()` waits for it. */
  async complete(prompt: string, maxTokens: number): Promise<OpenAiCompletion> {
    this.inFlight++;
    try {
      return await openAiComplete(this.url, { model: this.name, prompt, maxTokens });
    } catch (e) {
      // The reset can arrive before the exit: give the exit a moment to be seen.
      if (e instanceof InferenceConnectionError) await within(this.exit, 2_000);
      if (this.exitedHow !== undefined)
        throw new InferenceExitedError(`inference process for checkpoint "${this.name}" exited (${this.exitedHow})`, { cause: e });
      throw e;
    } finally {
      if (--this.inFlight === 0) this.drained?.();
    }
  }

  /** Takes no new requests, lets in-flight ones finish (up to drainMs), then stops the process. Idempotent. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.inFlight > 0) {
      const drained = new Promise<void>((resolve) => (this.drained = resolve));
      await within(drained, this.o.drainMs);
    }
    if (this.exitedHow === undefined) {
      this.child.kill('SIGTERM');
      const killer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
      await this.exit;
      clearTimeout(killer);
    }
    await this.exit;
  }

  /** The last line this start wrote to its log (the one line serve.py says why it exited, or a traceback's last). */
  private lastLogLine(): string {
    try {
      const text = fs.readFileSync(this.logFile).subarray(this.logOffset).toString('utf8');
      return text.trimEnd().split('\n').pop()?.trim() ?? '';
    } catch {
      return '';
    }
  }
}

/** Resolves when `p` does or after `ms`, whichever is first, leaving no timer behind. */
async function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** Opens `<home>/logs/<name>.log` for appending, after a start marker; the fd goes to the child's stdout and stderr. */
function openLog(home: string, name: string): { fd: number; path: string; offset: number } {
  const dir = path.join(home, 'logs');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.log`);
  const fd = fs.openSync(file, 'a');
  fs.writeSync(fd, `--- ${new Date().toISOString()} starting ${name}\n`);
  return { fd, path: file, offset: fs.fstatSync(fd).size };
}
