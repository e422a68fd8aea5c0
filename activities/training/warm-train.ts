// Whether a run goes to a warm trainer (`trainer.warmTrain`: backends/local/train-servers.ts), and how its server is
// started: in the sandbox a one-shot run gets, with the run's dataset and warm start read-only, and the server's own
// folder read-write instead of a run directory. Runs may share a server only where that sandbox and program are the
// same: the campaign, its trainer block, what the worker hides and the data bound in make the key. The gate's seed
// reruns and a patch experiment's runs always start a fresh process: a trainer that keeps state between runs must
// not make a rerun that confirms or measures noise depend on what ran before it. And the preflight's check that the
// trainer speaks `train --serve` at all (serveProblem).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { RunJson } from '../../core/job-contract';
import type { CampaignSpec } from '../../core/spec';
import { SEED_RERUN_PROPOSER } from '../../core/gate/noise-check';
import type { ServeRequest } from '../../backends/local/train-servers';
import { warmTrainRoot } from '../../services/paths';
import { isolatedEntry, trainerSetupOf } from './trainer-isolation';

/** The served launch of this run, or undefined when it runs a process of its own. */
export function serveRequestOf(
  spec: CampaignSpec,
  home: string,
  exp: { campaignId: string; proposer: string; recipeCommit: string | null },
  run: RunJson,
): ServeRequest | undefined {
  if (!spec.trainer.warmTrain || spec.backend.kind !== 'local') return undefined;
  if (exp.proposer === SEED_RERUN_PROPOSER || exp.recipeCommit) return undefined;
  const setup = trainerSetupOf(spec, home);
  const data = [run.dataset.path, ...(run.baseCheckpoint ? [run.baseCheckpoint] : [])];
  return {
    key: JSON.stringify([exp.campaignId, setup.trainer, setup.hide, setup.recipeDir ?? null, data]),
    root: warmTrainRoot(home),
    command: (serverDir) => isolatedEntry(setup, 'train', ['--serve'], { cwd: serverDir, data, readWrite: [serverDir] }),
  };
}

/** How long the preflight waits for a trainer's `train --serve` to start and end on an empty stdin. */
export const SERVE_PROBE_MS = 120_000;

/**
 * The preflight of a warm-trainer campaign (checkTrainer): the trainer's `train --serve`, started in the sandbox a
 * server gets (with no data), must end with exit 0 when its stdin ends at once, as the protocol says; a trainer that
 * does not speak it fails every run otherwise. Undefined when it does; else the one-line reason.
 */
export async function serveProblem(spec: CampaignSpec, home: string): Promise<string | undefined> {
  const root = warmTrainRoot(home);
  fs.mkdirSync(root, { recursive: true });
  const dir = fs.mkdtempSync(path.join(root, 'probe-'));
  try {
    const { argv, env } = isolatedEntry(trainerSetupOf(spec, home), 'train', ['--serve'], { cwd: dir, data: [], readWrite: [dir] });
    const child = spawn(argv[0], argv.slice(1), { cwd: dir, env, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-4096)));
    child.stdin!.on('error', () => {});
    child.stdin!.end();
    const how = await new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolve(`did not end within ${SERVE_PROBE_MS / 1000} s of an empty stdin`);
      }, SERVE_PROBE_MS);
      child.on('error', (e) => (clearTimeout(timer), resolve(`could not start: ${e.message}`)));
      child.on(
        'exit',
        (code, signal) => (
          clearTimeout(timer),
          resolve(code === 0 ? undefined : signal ? `was killed by ${signal}` : `exited with code ${code}`)
        ),
      );
    });
    if (!how) return undefined;
    const last = stderr.trim().split('\n').at(-1)?.trim();
    return `\`train --serve\` ${how}${last ? `: ${last}` : ''}`;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
