// A long-running `flywheel` child (serve, say): its stdout and stderr as text to wait on, and its exit.
import { spawn, type ChildProcess } from 'node:child_process';
import { FLYWHEEL_BIN } from './cli';

export interface CliChild {
  child: ChildProcess;
  /** Everything it printed so far, stdout and stderr together. */
  output(): string;
  /** Resolves with the first match of `pattern` in its output; rejects when it exits first or after `timeoutMs`. */
  line(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `flywheel <args>` with `env` on top of this process's environment. */
export function runCliChild(env: NodeJS.ProcessEnv, args: string[]): CliChild {
  const child = spawn(process.execPath, [FLYWHEEL_BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d));
  child.stderr!.on('data', (d: Buffer) => (out += d));
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    }),
  );
  const line = (pattern: RegExp, timeoutMs = 300_000): Promise<RegExpExecArray> =>
    new Promise((resolve, reject) => {
      const deadline = Date.now() + timeoutMs;
      const timer = setInterval(() => {
        const m = pattern.exec(out);
        if (m) (clearInterval(timer), resolve(m));
        else if (done || Date.now() > deadline)
          (clearInterval(timer),
            reject(new Error(`flywheel ${args[0]} ${done ? 'exited' : 'timed out'} before printing ${pattern}:\n${out}`)));
      }, 100);
    });
  return { child, output: () => out, line, exited };
}
