// One warm `predict --serve` process of a campaign's trainer (core/job-contract.ts PredictRequest), in the same
// sandbox as a one-shot predict: it sees its inbox read-only (the checkpoints it is asked about, hard-linked in) and
// its scratch folder read-write (prompts in, predictions out), nothing else of the worker's. One request at a time;
// the pool (predict-servers.ts) queues the rest. A server that times out, is cancelled or breaks the protocol is
// killed: its state is unknown, and the next request gets a fresh one.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { PredictPrompt, PredictReply, PredictRequest } from '../../core/job-contract';
import { predictInboxRoot, predictScratchRoot } from '../../services/paths';
import { isolatedEntry, type TrainerSetup } from '../training/trainer-isolation';
import { linkCheckpoint } from './link-checkpoint';
import { readPredictions, stderrTail, writePrompts } from './run-predict';
import { MAX_STDOUT_LINE, parseServeReply, readServeLines } from '../../backends/serve-replies';

/** The stderr kept for a failure's message. */
const STDERR_TAIL = 8 << 10;

export interface ServeOptions {
  /** @default 300000, as a one-shot predict */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export class PredictServer {
  /** Requests answered, failed ones included. */
  served = 0;
  private readonly child: ChildProcess;
  private readonly inbox: string;
  private readonly scratch: string;
  private stderr = '';
  private exit: string | undefined;
  private waiting: { id: string; resolve: (r: PredictReply) => void; reject: (e: Error) => void } | undefined;

  constructor(setup: TrainerSetup, scratchRoot: string = predictScratchRoot()) {
    this.inbox = fs.mkdtempSync(path.join(predictInboxRoot(setup.home), 's-'));
    this.scratch = fs.mkdtempSync(path.join(scratchRoot, 's-'));
    let argv: string[];
    try {
      argv = isolatedEntry(setup, 'predict', ['--serve'], { cwd: this.scratch, data: [this.inbox], readWrite: [this.scratch] }).argv;
    } catch (e) {
      this.removeFolders();
      throw e;
    }
    const [cmd, ...args] = argv;
    this.child = spawn(cmd, args, { cwd: this.scratch, env: {}, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr!.on('data', (c: Buffer) => (this.stderr = (this.stderr + c.toString('utf8')).slice(-STDERR_TAIL)));
    // A write after the process died fails here as EPIPE; the exit handler below fails the request.
    this.child.stdin!.on('error', () => {});
    this.child.on('error', (err) => this.ended(`could not start: ${err.message}`));
    this.child.on('exit', (code, signal) => this.ended(signal ? `killed by ${signal}` : `exited with code ${code}`));
    // Its predictions come back as a file (read confined: run-predict.ts readPredictions); stdout carries one-line
    // replies, and a line that never ends would grow in the worker's memory without end: past the cap, the server dies.
    readServeLines(
      this.child.stdout!,
      (line) => this.onLine(line),
      () => {
        if (this.exit !== undefined) return;
        this.child.kill('SIGKILL');
        this.ended(`wrote a stdout line of more than ${MAX_STDOUT_LINE} bytes`);
      },
    );
    // An idle server never holds its worker's process open; a request in flight does, through its time limit.
    this.child.unref();
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) (stream as unknown as { unref?: () => void })?.unref?.();
  }

  /** Whether it can take another request. */
  get alive(): boolean {
    return this.exit === undefined;
  }

  /** The predictions for `prompts` from the checkpoint file or folder at `checkpoint`, checked as a one-shot predict's. */
  async predict(checkpoint: string, prompts: PredictPrompt[], opts: ServeOptions = {}): Promise<Map<string, string>> {
    if (this.waiting) throw new Error('predict server: one request at a time');
    const id = `r${++this.served}`;
    const request: PredictRequest = {
      id,
      checkpoint: path.join(this.inbox, `${id}-${path.basename(checkpoint)}`),
      prompts: path.join(this.scratch, `${id}.prompts.jsonl`),
      out: path.join(this.scratch, `${id}.out.jsonl`),
    };
    try {
      linkCheckpoint(checkpoint, request.checkpoint);
      writePrompts(request.prompts, prompts);
      const reply = await this.send(request, opts);
      if (!reply.ok) throw new Error(`predict failed: ${reply.error ?? 'no reason given'}`);
      return readPredictions(request.out, prompts);
    } finally {
      fs.rmSync(request.checkpoint, { recursive: true, force: true });
      fs.rmSync(request.prompts, { force: true });
      fs.rmSync(request.out, { force: true });
    }
  }

  /** Ends the process (stdin closed, then killed) and removes its folders. */
  close(): void {
    this.child.stdin!.end();
    this.kill();
    this.removeFolders();
  }

  private removeFolders(): void {
    fs.rmSync(this.inbox, { recursive: true, force: true });
    fs.rmSync(this.scratch, { recursive: true, force: true });
  }

  private send(request: PredictRequest, opts: ServeOptions): Promise<PredictReply> {
    if (this.exit !== undefined) return Promise.reject(this.failure(`predict server ${this.exit}`));
    const timeoutMs = opts.timeoutMs ?? 300_000;
    return new Promise<PredictReply>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', abort);
        this.waiting = undefined;
      };
      const timer = setTimeout(() => {
        done();
        this.kill();
        reject(this.failure(`predict failed (killed at its time limit, ${timeoutMs} ms)`));
      }, timeoutMs);
      const abort = () => {
        done();
        this.kill();
        reject(opts.signal!.reason instanceof Error ? opts.signal!.reason : new Error('predict cancelled'));
      };
      if (opts.signal?.aborted) return abort();
      opts.signal?.addEventListener('abort', abort, { once: true });
      this.waiting = {
        id: request.id,
        resolve: (r) => (done(), resolve(r)),
        reject: (e) => (done(), reject(e)),
      };
      this.child.stdin!.write(JSON.stringify(request) + '\n');
    });
  }

  private onLine(line: string): void {
    const reply = this.waiting && parseServeReply(line, this.waiting.id);
    if (reply) this.waiting!.resolve(reply);
  }

  private ended(how: string): void {
    this.exit ??= how;
    this.waiting?.reject(this.failure(`predict server ${how}`));
  }

  private failure(what: string): Error {
    const tail = stderrTail(this.stderr);
    return new Error(tail ? `${what}: ${tail}` : what);
  }

  /** Its state is unknown after a time limit or a cancel: it takes no further request, even before its exit arrives. */
  private kill(): void {
    if (this.exit !== undefined) return;
    this.exit = 'was killed';
    this.child.kill('SIGKILL');
  }
}
