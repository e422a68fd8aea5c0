// One process of the test-program grader (the output's or the tests'), started from its argv (a bubblewrap command)
// with a socket as its fd 3: messages go in and come out one JSON line each, and a line longer than the cap is
// refused, not buffered. Its stdout is read and dropped (an output's console.log), its stderr's tail kept for the
// one line that says how it died.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Duplex } from 'node:stream';

export interface HarnessEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last few KiB of its stderr. */
  stderr: string;
}

/** Who hears a harness's messages now (a harness outlives one item on the tests' side). */
export interface HarnessListener {
  line(text: string): void;
  /** A message longer than the cap: nothing more is read from this process. */
  oversize(): void;
}

const STDERR_TAIL = 8 << 10;

export class HarnessProcess {
  readonly ended: Promise<HarnessEnd>;
  private readonly child: ChildProcess;
  private readonly wire: Duplex;
  private listener: HarnessListener | undefined;
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private dead = false;

  /** `maxLine`: the longest message it may send, in bytes. */
  constructor(argv: string[], maxLine: number) {
    this.child = spawn(argv[0], argv.slice(1), { cwd: '/', env: {}, stdio: ['ignore', 'pipe', 'pipe', 'pipe'], detached: true });
    this.wire = this.child.stdio[3] as Duplex;
    let stderr = '';
    this.child.stdout!.resume();
    this.child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-STDERR_TAIL)));
    // Writes to a process that died fail with EPIPE: its end is reported through `ended`.
    this.wire.on('error', () => {});
    this.wire.on('data', (chunk: Buffer) => this.read(chunk, maxLine));
    this.ended = new Promise((resolve) => {
      this.child.on('error', (err) => {
        this.dead = true;
        resolve({ code: null, signal: null, stderr: `could not start: ${err.message}` });
      });
      this.child.on('close', (code, signal) => {
        this.dead = true;
        this.kill(); // anything it left in its process group
        resolve({ code, signal, stderr });
      });
    });
  }

  get alive(): boolean {
    return !this.dead;
  }

  listen(listener: HarnessListener | undefined): void {
    this.listener = listener;
  }

  /** One message: an object, or a line already checked (relayed as it came). */
  send(message: object | string): void {
    if (this.dead) return;
    this.wire.write((typeof message === 'string' ? message : JSON.stringify(message)) + '\n');
  }

  kill(): void {
    try {
      process.kill(-this.child.pid!, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }

  private read(chunk: Buffer, maxLine: number): void {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl);
      start = nl + 1;
      if (this.partialBytes + piece.length > maxLine) return this.refuse();
      const line = this.partial.length > 0 ? Buffer.concat([...this.partial, piece]).toString('utf8') : piece.toString('utf8');
      this.partial = [];
      this.partialBytes = 0;
      this.listener?.line(line);
    }
    const rest = chunk.subarray(start);
    if (this.partialBytes + rest.length > maxLine) return this.refuse();
    if (rest.length > 0) {
      this.partial.push(Buffer.from(rest));
      this.partialBytes += rest.length;
    }
  }

  private refuse(): void {
    this.wire.pause();
    this.wire.removeAllListeners('data');
    this.partial = [];
    this.listener?.oversize();
  }
}
