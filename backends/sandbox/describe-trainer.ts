// Asks a trainer for its knobs through the `describe` entry point (core/job-contract.ts TrainerDescription), in the
// same sandbox as `train` (no network, FLYWHEEL_HOME and Flywheel's scratch hidden, a scratch folder of its own as its
// working directory). A trainer that exits non-zero, prints no description or takes longer than the timeout has its
// knobs reported as not checked, with the reason; nothing else of it runs.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TrainerDescription } from '../../core/job-contract';
import { isolate } from './sandbox';
import { isolationRequest, type TrainerSetup } from './trainer-request';

export type KnobDescription = { knobs: string[] } | { unchecked: string };

const MAX_OUTPUT = 1 << 20;

export async function describeTrainer(setup: TrainerSetup, timeoutMs = 60_000): Promise<KnobDescription> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'flywheel-describe-'));
  try {
    fs.chmodSync(scratch, 0o755);
    let cmd;
    try {
      cmd = isolate(isolationRequest(setup, 'describe', [], { cwd: scratch, data: [], readWrite: [scratch] }));
    } catch (e) {
      return { unchecked: `the trainer cannot start here: ${(e as Error).message}` };
    }
    const { code, stdout, stderr, timedOut } = await run(cmd.argv, cmd.env, scratch, timeoutMs);
    if (timedOut) return { unchecked: `its describe entry point did not answer within ${timeoutMs / 1000} s` };
    const lastError = stderr
      .split('\n')
      .filter((l) => l.trim())
      .at(-1);
    if (code !== 0)
      return { unchecked: `it has no describe entry point (exit ${code}${lastError ? `: ${lastError.trim().slice(0, 200)}` : ''})` };
    const line =
      stdout
        .split('\n')
        .filter((l) => l.trim())
        .at(-1) ?? '';
    try {
      const parsed = JSON.parse(line) as TrainerDescription;
      if (parsed && typeof parsed.knobs === 'object' && parsed.knobs !== null && !Array.isArray(parsed.knobs))
        return { knobs: Object.keys(parsed.knobs) };
    } catch {
      // fall through: not a description
    }
    return { unchecked: 'its describe entry point printed no {"knobs": {…}} line' };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

function run(argv: string[], env: Record<string, string>, cwd: string, timeoutMs: number) {
  return new Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean }>((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const keep = (text: string, chunk: Buffer) => (text.length < MAX_OUTPUT ? text + chunk.toString('utf8') : text);
    child.stdout.on('data', (c: Buffer) => (stdout = keep(stdout, c)));
    child.stderr.on('data', (c: Buffer) => (stderr = keep(stderr, c)));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      resolve({ code: -1, stdout, stderr: `${stderr}\n${e.message}`, timedOut });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}
