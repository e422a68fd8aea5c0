// What a warm trainer saves per run (trainer.warmTrain, backends/local/train-server.ts), beside its peer in the same
// run: N runs of one trainer through the local backend, one at a time, each launched and followed to its end as the
// training activity does it, as a process of its own (the launcher, the sandbox, the interpreter) and as a request to
// a warm `train --serve` in the same sandbox, the two interleaved. Per run: wall time from launch to the recorded
// end, and the machine's CPU. Trainers: `fixture` (Node, a no-op run of one step: what the throughput benches run),
// `builtin` (the built-in char-level trainer, 20 steps), `torch` (the reference PyTorch trainer, one step of a tiny
// model: its import of torch is most of a one-shot run). No Temporal, no PostgreSQL: the backend alone.
// Run: node bin/run-ts.js bench/warm-train.ts [N] [TRAINERS]   (defaults 20, fixture,builtin,torch; torch is left out
// with a line saying so where the interpreter cannot import torch)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { trainCommand } from '../activities/training/train-command';
import { serveRequestOf } from '../activities/training/warm-train';
import { LocalBackend } from '../backends/local/local-backend';
import { TrainServers } from '../backends/local/train-servers';
import type { JobHandle, LaunchRequest } from '../backends';
import type { RunJson } from '../core/job-contract';
import { resolveLimits } from '../core/resource-limits';
import type { CampaignSpec, CampaignSpecInput } from '../core/spec';
import { safeName } from '../services/paths';
import { parseSpec } from '../tasks/task-spec';
import { fixtureSpec, torchSpec } from '../test/helpers/specs';
import { loadAverage } from './lib/load-average';
import { runBench } from './lib/run-bench';

const TRAINERS: Record<string, { spec: () => CampaignSpecInput; params: Record<string, number> }> = {
  fixture: { spec: () => fixtureSpec('warm-bench-fixture', { steps: 1 }), params: { steps: 1, sleepMs: 0 } },
  builtin: {
    spec: () => ({ ...fixtureSpec('warm-bench-builtin', { steps: 20 }), trainer: { command: 'builtin' } }) as CampaignSpecInput,
    params: { steps: 20, hidden: 16, context: 4, logEvery: 10 },
  },
  torch: {
    spec: () => torchSpec('warm-bench-torch', [0.001], 1),
    params: { n_layer: 1, n_head: 2, d_model: 32, context: 32, batchSize: 8, logEvery: 1, steps: 1, lr: 0.001 },
  },
};

/**
 * The Python that imports torch, told to torchSpec as the test set-up's probe would tell it (the project's venv first,
 * then python3); undefined when neither does.
 */
function findTorch(): string | undefined {
  for (const python of [path.join(__dirname, '..', '.flywheel', 'venv', 'bin', 'python'), 'python3']) {
    try {
      execFileSync(python, ['-c', 'import torch'], { stdio: 'ignore' });
    } catch {
      continue;
    }
    const probes = JSON.parse(process.env.FLYWHEEL_TEST_SERVICES ?? '{}') as Record<string, unknown>;
    process.env.FLYWHEEL_TEST_SERVICES = JSON.stringify({ ...probes, torch: { ok: true, path: python } });
    return python;
  }
  return undefined;
}

/** Busy ticks of the whole machine (user, nice, system, irq, softirq, steal). */
function machineTicks(): number {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
}
const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 20);
  const names = (process.argv[3] ?? 'fixture,builtin,torch').split(',');
  if (!Number.isInteger(n) || n < 1 || names.some((t) => !Object.hasOwn(TRAINERS, t))) {
    console.error(`usage: bench/warm-train.ts [N] [TRAINERS]: N a positive integer; TRAINERS from ${Object.keys(TRAINERS).join(',')}`);
    process.exit(2);
  }
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'flywheel-warm-bench-'));
  const dataset = path.join(home, 'datasets', 'v1');
  fs.mkdirSync(dataset, { recursive: true });
  fs.writeFileSync(path.join(dataset, 'train.txt'), 'def add(a, b):\n    return a + b\n'.repeat(200));
  const servers = new TrainServers();
  const backend = new LocalBackend({ servers });
  let seq = 0;
  try {
    console.log(`warm trainers: ${n} runs per trainer and way, one at a time, interleaved; ms per run (median), machine CPU ms per run`);
    console.log('trainer   one-shot_wall  warm_wall  ratio  one-shot_cpu  warm_cpu  ratio  servers  load');
    for (const name of names) {
      const t = TRAINERS[name];
      if (name === 'torch' && !findTorch()) {
        console.log('torch     (left out: neither .flywheel/venv nor python3 imports torch; bash .ci/install-torch.sh installs it)');
        continue;
      }
      const input = t.spec();
      const spec: CampaignSpec = parseSpec({ ...input, trainer: { ...input.trainer, warmTrain: true } });
      const run = (warm: boolean): { req: LaunchRequest } => {
        const runId = `warm-bench-${name}-${++seq}/e0/r1`;
        const runDir = path.join(home, 'runs', safeName(runId));
        fs.mkdirSync(runDir, { recursive: true });
        const runJson: RunJson = {
          runId,
          experimentId: runId.slice(0, -3),
          recipe: name === 'builtin' ? 'charlm' : 'custom',
          params: t.params,
          seed: 1000 + seq,
          dataset: { versionId: 'v1', path: dataset, trainFile: path.join(dataset, 'train.txt') },
          baseCheckpoint: null,
          checkpointEvery: 0,
        };
        fs.writeFileSync(path.join(runDir, 'run.json'), JSON.stringify(runJson));
        const common = { runId, runDir, limits: resolveLimits(spec.trainer.limits) };
        if (warm) {
          const serve = serveRequestOf(spec, home, { campaignId: spec.name, proposer: 'random', recipeCommit: null }, runJson)!;
          return { req: { ...common, argv: [], serve } };
        }
        const { argv, env } = trainCommand(spec, home, runJson, runDir);
        return { req: { ...common, argv, env } };
      };
      const timed = async (warm: boolean): Promise<{ wall: number; cpu: number }> => {
        const { req } = run(warm);
        const c0 = machineTicks();
        const t0 = performance.now();
        const h: JobHandle = await backend.launch(req);
        for (;;) {
          const s = await backend.status(h);
          if (s.state === 'succeeded') break;
          if (s.state !== 'running')
            throw new Error(`${name} ${warm ? 'warm' : 'one-shot'} run ${req.runId}: ${s.state} (${await backend.stderrTail(h, 3)})`);
          await new Promise((r) => setTimeout(r, 2));
        }
        return { wall: performance.now() - t0, cpu: (machineTicks() - c0) * TICK_MS };
      };
      await timed(true); // the server's start, not counted: a sweep pays it once per server
      const started = servers.started;
      const oneShot: { wall: number; cpu: number }[] = [];
      const warm: { wall: number; cpu: number }[] = [];
      for (let i = 0; i < n; i++) {
        oneShot.push(await timed(false));
        warm.push(await timed(true));
      }
      const [ow, ww] = [median(oneShot.map((x) => x.wall)), median(warm.map((x) => x.wall))];
      const [oc, wc] = [median(oneShot.map((x) => x.cpu)), median(warm.map((x) => x.cpu))];
      console.log(
        `${name.padEnd(8)} ${ow.toFixed(1).padStart(14)} ${ww.toFixed(1).padStart(10)} ${(ww / ow).toFixed(3).padStart(6)} ` +
          `${oc.toFixed(0).padStart(13)} ${wc.toFixed(0).padStart(9)} ${(wc / oc).toFixed(3).padStart(6)} ${String(servers.started - started).padStart(8)}  ${loadAverage()}`,
      );
    }
    console.log(
      '\nwall: from the launch to the recorded end, the status polled every 2 ms; servers: started during the timed runs (0: one',
    );
    console.log("server took them all); the machine's CPU includes this process's own work and anything else running");
  } finally {
    servers.close();
    fs.rmSync(home, { recursive: true, force: true });
  }
}

runBench(main);
