// `python3 -m py_compile` of a patch's changed Python files, run in the trainers' sandbox (bubblewrap: no network,
// FLYWHEEL_HOME hidden, an unprivileged uid of its own, kernel limits): the files are code a model wrote, and a
// compile step is where a hostile one would first run. The files are copied to a scratch folder outside
// FLYWHEEL_HOME, bound read-only; the byte code goes to the sandbox's private /tmp.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isolate } from '../../backends/sandbox/sandbox';
import { predictScratchRoot } from '../../services/paths';

/** What the compile may use: Python with a few files needs little. */
const LIMITS = { memoryMb: 1024, processes: 32, openFiles: 64, diskMb: 16 };
const TIMEOUT_MS = 60_000;

export interface CompileOptions {
  /** FLYWHEEL_HOME: hidden from the sandbox. */
  home: string;
  /** `trainer.unsandboxed`: compile without the sandbox where the host cannot make one. @default false */
  unsandboxed?: boolean;
}

/** null when every file compiles, else one line: `train.py line 3: SyntaxError: '(' was never closed`. */
export async function pyCompile(files: Record<string, string>, o: CompileOptions): Promise<string | null> {
  const names = Object.keys(files).sort();
  if (names.length === 0) return null;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'flywheel-pycompile-'));
  try {
    for (const n of names) {
      const f = path.join(scratch, 'src', n);
      fs.mkdirSync(path.dirname(f), { recursive: true });
      fs.writeFileSync(f, files[n]);
    }
    const src = path.join(scratch, 'src');
    const cmd = isolate({
      argv: ['python3', '-m', 'py_compile', ...names.map((n) => path.join(src, n))],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PYTHONPYCACHEPREFIX: '/tmp/pycache', LC_ALL: 'C.UTF-8' },
      cwd: '/tmp',
      code: [],
      data: [src],
      readWrite: [],
      hide: [path.resolve(o.home), predictScratchRoot()],
      network: false,
      unsandboxed: o.unsandboxed ?? false,
      trusted: false,
      limits: LIMITS,
      uidKey: scratch,
    });
    const { code, stderr } = await run(cmd.argv, cmd.sandbox === 'none' ? { PYTHONPYCACHEPREFIX: path.join(scratch, 'pyc') } : {});
    if (code === 0) return null;
    return compileError(stderr, src);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

function run(argv: string[], env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(argv[0], argv.slice(1), { timeout: TIMEOUT_MS, maxBuffer: 1 << 20, env: { ...process.env, ...env } }, (err, _out, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stderr: String(stderr) });
    });
  });
}

/** py_compile's report as one line, with the scratch folder's prefix taken off the file name. */
export function compileError(stderr: string, src: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trimEnd())
    .filter(Boolean);
  const where = lines.map((l) => /File "([^"]+)", line (\d+)/.exec(l)).find((m) => m);
  const error =
    [...lines]
      .reverse()
      .find((l) => /^\w*(Error|Exception)\b/.test(l.trim()))
      ?.trim() ??
    lines[lines.length - 1] ??
    'py_compile failed';
  if (!where) return error.replaceAll(src + '/', '');
  return `${path.relative(src, where[1])} line ${where[2]}: ${error.replaceAll(src + '/', '')}`;
}
