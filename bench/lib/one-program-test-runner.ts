// The test-program grader as it was before issue 32 (item 1), kept as bench/eval-integrity.ts's peer and nowhere else:
// the output and the item's tests as one Node program on the host (output, tests, then a success marker), Node's
// permission model its only fence. An output in that program can grade itself; this file exists to measure what the
// two sandboxed processes cost against it, in the same run.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { GradeOutcome } from '../../core/graders';
import type { TestProgramConfig } from '../../core/graders/test-program';

const PERMISSION_FLAG = Number(process.versions.node.split('.')[0]) >= 22 ? '--permission' : '--experimental-permission';
const MARKER = '__flywheel_tests_passed__';
const MAX_OUTPUT = 64 << 10;

export async function runOneProgram(output: string, config: TestProgramConfig): Promise<GradeOutcome> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fw-grade-'));
  const file = path.join(dir, 'program.js');
  fs.writeFileSync(file, `${output}\n;\n${config.tests}\n;\nprocess.stdout.write(${JSON.stringify(`\n${MARKER}\n`)});\n`);
  try {
    return await new Promise((resolve) => {
      const args = [PERMISSION_FLAG, `--allow-fs-read=${file}`, `--max-old-space-size=${config.memoryMb}`, '--no-warnings', file];
      const child = spawn(process.execPath, args, { cwd: dir, env: {}, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      let stdout = '';
      child.stdout.on('data', (c: Buffer) => (stdout = (stdout + c.toString('utf8')).slice(-MAX_OUTPUT)));
      child.stderr.resume();
      const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), config.timeoutMs);
      child.on('error', (err) => resolve({ score: 0, error: err.message }));
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ score: code === 0 && stdout.endsWith(`\n${MARKER}\n`) ? 1 : 0 });
      });
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
