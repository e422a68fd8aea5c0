// Campaign specs for tests: the built-in task with a small, fast search space, and ids unique per test.
import crypto from 'node:crypto';
import path from 'node:path';
import type { CampaignSpecInput } from '../../core/spec';
import { sandboxAvailable } from './sandbox';
import { torchPython } from './torch-python';

export function uniqueName(label: string): string {
  return `${label}-${crypto.randomBytes(3).toString('hex')}`;
}

/** The built-in task with short runs: each trains in a second or two on this machine. */
export function fastBuiltinSpec(
  name: string,
  over: Partial<CampaignSpecInput> & { innerLoop?: Record<string, unknown> } = {},
): CampaignSpecInput {
  const { innerLoop, ...rest } = over;
  return {
    name,
    // Its 20 held-out loss items come from 13 source files: the task's default cluster test (clusterBy: source) can
    // reach a gate's level (the least p is 2^-13).
    task: { kind: 'builtin-code', completionItems: 60, lossItems: 20 },
    trainer: { command: 'builtin', fixed: { logEvery: 20 } },
    searchSpace: {
      lr: { type: 'float', low: 0.0003, high: 0.03, log: true },
      hidden: { type: 'int', low: 16, high: 64, log: true },
      context: { type: 'int', low: 3, high: 8 },
      steps: { type: 'int', low: 150, high: 300 },
    },
    innerLoop: {
      budget: { experiments: 4, parallelism: 2 },
      batchSize: 2,
      startupTrials: 2,
      pruning: { rule: 'none' },
      ...innerLoop,
    },
    ...rest,
  } as CampaignSpecInput;
}

const FIXTURE_TRAINER = path.join(__dirname, '..', 'fixtures', 'fixture-trainer.js');

/** A campaign on the fixture trainer: `params` fixes every knob (a one-point search space per knob). */
export function fixtureSpec(
  name: string,
  params: Record<string, number | boolean>,
  innerLoop: Record<string, unknown> = {},
): CampaignSpecInput {
  const searchSpace = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, { type: 'categorical', choices: [v] }]));
  return {
    name,
    task: { kind: 'builtin-code', completionItems: 10, lossItems: 5 },
    trainer: { command: [process.execPath, FIXTURE_TRAINER], unsandboxed: !sandboxAvailable },
    searchSpace,
    selection: { metric: 'exact_match', mode: 'max' },
    innerLoop: { budget: { experiments: 1, parallelism: 1 }, batchSize: 1, startupTrials: 0, pruning: { rule: 'none' }, ...innerLoop },
  } as CampaignSpecInput;
}

const TORCH_TRAINER = path.join(__dirname, '..', '..', 'trainers', 'torch', 'main.py');

/**
 * A campaign on the reference PyTorch trainer with a tiny CPU model. `fixed` holds `steps: 0`, which only the
 * baseline keeps (it gets no searched params), so the baseline is the untrained model; every experiment
 * searches `steps` too, at one value. Selection is on exact match: Flywheel cannot score bits per byte of a
 * torch checkpoint itself.
 */
export function torchSpec(name: string, lrChoices: number[], steps: number, innerLoop: Record<string, unknown> = {}): CampaignSpecInput {
  return {
    name,
    task: { kind: 'builtin-code', completionItems: 10, lossItems: 5 },
    trainer: {
      command: [torchPython(), TORCH_TRAINER],
      // The sandbox shows the script alone; the trainer imports its neighbours, so their folder is named.
      readOnlyPaths: [path.dirname(TORCH_TRAINER)],
      unsandboxed: !sandboxAvailable,
      fixed: { n_layer: 1, n_head: 2, d_model: 32, context: 32, batchSize: 8, logEvery: 25, steps: 0 },
    },
    searchSpace: { lr: { type: 'categorical', choices: lrChoices }, steps: { type: 'categorical', choices: [steps] } },
    selection: { metric: 'exact_match', mode: 'max' },
    // The gate's default (bits_per_byte, for the built-in task) is refused for this trainer too.
    outerLoop: { promotion: { metric: 'exact_match' } },
    innerLoop: {
      budget: { experiments: lrChoices.length, parallelism: 1 },
      batchSize: lrChoices.length,
      startupTrials: lrChoices.length,
      pruning: { rule: 'none' },
      ...innerLoop,
    },
  } as CampaignSpecInput;
}
