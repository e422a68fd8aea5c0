// Looks once per test run, in the global set-up, for the services some suites need; the answers reach every test
// file through FLYWHEEL_TEST_SERVICES, where test/helpers/requires.ts reads them.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { findOnPath } from '../../backends/sandbox/find-on-path';
import { probeSandbox } from '../../backends/sandbox/bubblewrap';
import { probeEgress } from '../../backends/sandbox/egress-network';
import { RayJobsClient } from '../../backends/ray/ray-jobs-client';
import { controllerUp } from '../../backends/slurm/slurm-commands';
import { CHROMIUM } from '../dashboard/browser';
import type { Service, ServiceProbe } from '../helpers/requires';
import { toolsHome } from './install-test-tools';

export interface ProbeInputs {
  /** Pythons to try for torch, in order (the project's venv first). */
  pythons: string[];
  /** The time-skipping test server the set-up installed, if it could. */
  testServer: string | undefined;
  /** The Hugging Face environment's interpreter (stack/hf-env.ts), if the set-up could install it. */
  hfPython: string | undefined;
}

const PROBES: Record<Service, (i: ProbeInputs) => Promise<ServiceProbe>> = {
  slurm: async () => {
    if (!findOnPath('scontrol')) return { ok: false, reason: 'scontrol is not on PATH' };
    const ping = await controllerUp({ timeoutMs: 10_000 });
    return ping.up ? { ok: true } : { ok: false, reason: `scontrol ping: ${ping.message}` };
  },
  ray: async () => {
    const client = new RayJobsClient({ timeoutMs: 5_000 });
    try {
      await client.version();
      return { ok: true };
    } catch {
      return { ok: false, reason: `no Ray Jobs API answers at ${client.address}` };
    }
  },
  torch: async ({ pythons }) => {
    for (const python of pythons) {
      const version = await output(python, ['-c', 'import torch; print(torch.__version__)']);
      if (version) return { ok: true, path: python, reason: `torch ${version}` };
    }
    return { ok: false, reason: `no torch in ${pythons.join(' or ')}` };
  },
  hf: async ({ hfPython }) => {
    if (!hfPython) return { ok: false, reason: 'the hf-venv could not be installed' };
    const v = await output(
      hfPython,
      [
        '-c',
        'import transformers, trl, peft; print(transformers.__version__, trl.__version__, peft.__version__)',
        // Importing trl takes 10-15 s on a quiet machine; on a loaded shared one (while the set-up starts the
        // servers), more than the 60 s the other probes get, and the HF suites then skipped.
      ],
      240_000,
    );
    return v
      ? { ok: true, path: hfPython, reason: `transformers/trl/peft ${v}` }
      : { ok: false, reason: `${hfPython} cannot import transformers, trl and peft` };
  },
  mlflow: async () => {
    // .ci/install-mlflow.sh's venv; the test starts its own server from it.
    const mlflow = path.join(toolsHome(), 'mlflow-venv', 'bin', 'mlflow');
    return fs.existsSync(mlflow) ? { ok: true, path: mlflow } : { ok: false, reason: `no ${mlflow}` };
  },
  chromium: async () => (fs.existsSync(CHROMIUM) ? { ok: true, path: CHROMIUM } : { ok: false, reason: `no ${CHROMIUM}` }),
  bubblewrap: async () => {
    const probe = probeSandbox();
    return probe.ok ? { ok: true, path: probe.bwrap } : { ok: false, reason: probe.reason };
  },
  // A networked trainer's egress-only namespace, and a stand-in hub in a network namespace of the test's own (root).
  egress: async () => {
    const sandbox = probeSandbox();
    if (!sandbox.ok) return { ok: false, reason: sandbox.reason };
    const egress = probeEgress();
    if (!egress.ok) return { ok: false, reason: egress.reason };
    return process.getuid?.() === 0 ? { ok: true } : { ok: false, reason: 'the egress tests make a network namespace: run them as root' };
  },
  'temporal-test-server': async ({ testServer }) =>
    testServer ? { ok: true, path: testServer } : { ok: false, reason: 'it could not be installed' },
};

/** FLYWHEEL_TEST_ABSENT=slurm,torch: treat these as absent, to see a fresh machine's run on one that has them. */
export const ABSENT_ENV = 'FLYWHEEL_TEST_ABSENT';

/** Probes `services` concurrently. */
export async function probeServices(services: Service[], inputs: ProbeInputs): Promise<Partial<Record<Service, ServiceProbe>>> {
  const absent = (process.env[ABSENT_ENV] ?? '').split(',').map((s) => s.trim());
  const probe = async (s: Service): Promise<ServiceProbe> =>
    absent.includes(s) ? { ok: false, reason: `${ABSENT_ENV} names it` } : PROBES[s](inputs);
  return Object.fromEntries(await Promise.all(services.map(async (s) => [s, await probe(s)] as const)));
}

export const ALL_SERVICES = Object.keys(PROBES) as Service[];

/** The program's stdout, trimmed, or undefined when it could not run or failed. */
function output(program: string, args: string[], timeout = 60_000): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'ignore'], timeout });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.on('error', () => resolve(undefined));
    child.on('close', (code) => resolve(code === 0 ? out.trim() : undefined));
  });
}
