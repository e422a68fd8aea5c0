// Runs the test-program grader: the output and the item's tests as one Node program in a child process, with a
// wall-clock limit (the child's process group is killed at it), a heap limit, no child processes or worker threads and no
// file access beyond the program itself (Node's permission model), and an empty environment. A hang, a crash or a
// blown memory limit is an error, never a pass.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { GradeOutcome } from '../../../core/graders';
import { TESTS_PASSED_MARKER, testProgramSource, type TestProgramConfig } from '../../../core/graders/test-program';

/** Node 20 names the permission model `--experimental-permission`; Node 22 and later `--permission`. */
const PERMISSION_FLAG = Number(process.versions.node.split('.')[0]) >= 22 ? '--permission' : '--experimental-permission';
/** Output kept from a child, so a program that prints forever cannot fill the worker's memory. */
const MAX_OUTPUT = 64 << 10;

export async function runTestProgram(output: string, config: TestProgramConfig): Promise<GradeOutcome> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fw-grade-'));
  const file = path.join(dir, 'program.js');
  fs.writeFileSync(file, testProgramSource(output, config));
  try {
    return await runChild(file, config);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function runChild(file: string, config: TestProgramConfig): Promise<GradeOutcome> {
  return new Promise((resolve) => {
    const args = [PERMISSION_FLAG, `--allow-fs-read=${file}`, `--max-old-space-size=${config.memoryMb}`, '--no-warnings', file];
    const child = spawn(process.execPath, args, { cwd: path.dirname(file), env: {}, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout = (stdout + c.toString('utf8')).slice(-MAX_OUTPUT)));
    child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-MAX_OUTPUT)));
    let timedOut = false;
    const kill = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, config.timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ score: 0, error: `the test program could not start: ${err.message}` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      kill(); // anything the program left behind in its group
      const lastLine = stderr.trim().split('\n').slice(-1)[0] ?? '';
      if (timedOut) return resolve({ score: 0, error: `killed at its time limit (${config.timeoutMs} ms)` });
      if (/heap out of memory|Allocation failed/i.test(stderr))
        return resolve({ score: 0, error: `killed at its memory limit (${config.memoryMb} MiB)` });
      if (signal) return resolve({ score: 0, error: `crashed with ${signal}: ${lastLine}` });
      // A failing test throws (exit 1): an honest fail, not an error. Exit 0 passes only with the marker last.
      resolve({ score: code === 0 && stdout.endsWith(`\n${TESTS_PASSED_MARKER}\n`) ? 1 : 0 });
    });
  });
}
