// `flywheel demo --task NAME` for a task that takes the user's path (one whose example writes its files): writes the
// task's dataset and suite files into FLYWHEEL_HOME/demo/<campaign>, then runs, as child processes of
// bin/flywheel.js, exactly what a user types: `flywheel dataset add`, `flywheel suite add`, `flywheel run` (or, with
// --outer, N outer iterations with the task's simulated users). Prints the held-out pass rate of the baseline and of
// the best checkpoint, overall and per category; it improved when the selection metric did, in its direction.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import type { FlywheelConfig } from '../core/config';
import type { Endpoints } from '../stack/endpoints';
import type { InnerLoopResult } from '../contracts/inner-loop';
import { freshDemoCampaign } from '../services/demo-campaign';
import { registerCampaignVersion } from '../services/campaigns/campaign-versions';
import { heldoutMetricsOf } from '../services/queries/heldout-metrics';
import { productionCheckpointOf } from '../services/production-model';
import type { ExampleTask } from '../services/example-tasks';
import { summaryMetricsOfSpec } from '../services/task-registry';
import { FlywheelError } from '../core/errors';
import { loadSpecFile } from './spec-file';
import { runOuterDemo } from './outer-demo';
import { withSession } from './session';
import { heldoutImproved } from './print-result';

const BIN = path.join(__dirname, '..', 'bin', 'flywheel.js');

export interface TaskDemoOptions {
  seed?: number;
  experiments?: number;
  outer?: number;
  usersEvents: number;
  json: boolean;
}

/** A child `flywheel` command that failed; its own message is on stderr above. */
export class DemoStepError extends FlywheelError {}

/**
 * Runs `flywheel ARGS` against the same stack; stderr passes through, stdout is returned and echoed to `echo` (stderr
 * under --json, so stdout stays one JSON document).
 */
function flywheel(args: string[], env: NodeJS.ProcessEnv, echo?: NodeJS.WritableStream): Promise<string> {
  console.error(`$ flywheel ${args.join(' ')}`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      echo?.write(c);
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new DemoStepError(`\`flywheel ${args.join(' ')}\` exited ${code ?? 'on a signal'}`)),
    );
  });
}

/** The environment that points a child at this stack, whether it came from the environment or the embedded one. */
const childEnv = (config: FlywheelConfig, e: Endpoints): NodeJS.ProcessEnv => ({
  ...process.env,
  FLYWHEEL_HOME: config.home,
  TEMPORAL_ADDRESS: e.temporalAddress,
  TEMPORAL_NAMESPACE: e.namespace,
  DATABASE_URL: e.databaseUrl,
  FLYWHEEL_TASK_QUEUE_PREFIX: e.taskQueuePrefix,
});

/** Metric names first `pass_rate`, then each `category.*`, as the demo's table lists them. */
export function pickMetrics(...records: (Record<string, number> | undefined)[]): string[] {
  const names = new Set(records.flatMap((r) => Object.keys(r ?? {})));
  return ['pass_rate', ...[...names].filter((n) => n.startsWith('category.')).sort()].filter((n) => names.has(n));
}

export function formatBeforeAfter(title: string, before?: Record<string, number>, after?: Record<string, number>): string {
  const fmt = (v?: number) => (v === undefined ? '-' : v.toFixed(3)).padStart(9);
  const names = pickMetrics(before, after);
  const width = Math.max(10, ...names.map((n) => n.length));
  return [title, `  ${''.padEnd(width)} ${'before'.padStart(9)} ${'after'.padStart(9)}`]
    .concat(names.map((n) => `  ${n.padEnd(width)} ${fmt(before?.[n])} ${fmt(after?.[n])}`))
    .join('\n');
}

export async function runTaskDemo(
  config: FlywheelConfig,
  endpoints: Endpoints,
  task: ExampleTask,
  o: TaskDemoOptions,
): Promise<{ before?: Record<string, number>; after?: Record<string, number>; improved: boolean }> {
  if (!task.writeFiles) throw new FlywheelError('this task has no files of its own to register');
  const raw = parse(fs.readFileSync(task.spec, 'utf8')) as Record<string, any>;
  const seed = o.seed ?? (raw.innerLoop?.seed as number | undefined) ?? 1;
  raw.innerLoop = { ...raw.innerLoop, seed };
  if (o.experiments) raw.innerLoop.budget = { ...raw.innerLoop.budget, experiments: o.experiments };
  raw.name = await withSession((s) => freshDemoCampaign(s.db, raw.name as string), endpoints);
  const dir = path.join(config.home, 'demo', raw.name as string);
  const files = task.writeFiles(dir, seed);
  const specFile = path.join(dir, `${raw.name}.yaml`);
  fs.writeFileSync(specFile, stringify(raw));
  const spec = loadSpecFile(specFile);
  console.error(`campaign ${spec.name}, seed ${seed}: task files in ${dir} (the same seed prints the same figures)`);
  if (spec.task.kind !== 'custom') throw new FlywheelError(`${task.spec}: the task is not a custom one`);
  const env = childEnv(config, endpoints);
  const echo = o.json ? process.stderr : process.stdout;
  await flywheel(['dataset', 'add', spec.task.dataset.split('@')[0], files.trainFile], env, echo);
  await flywheel(['suite', 'add', files.suiteFile], env, echo);

  let before: Record<string, number> | undefined;
  let after: Record<string, number> | undefined;
  if (o.outer) {
    const r = await withSession(async (s) => {
      const { versionId } = await registerCampaignVersion(s.db, raw, specFile);
      const outer = await runOuterDemo(s, spec, versionId, {
        iterations: o.outer!,
        events: o.usersEvents,
        seed,
        json: o.json,
        users: task.users({ home: config.home, seed }),
      });
      // Before: production after the first iteration (the first promotion); after: production now.
      const first = outer.iterations.find((i) => i.productionCheckpointId)?.productionCheckpointId;
      const now = await productionCheckpointOf(s.db, spec.name);
      return {
        outer,
        before: first ? await heldoutMetricsOf(s.db, first) : undefined,
        after: now ? await heldoutMetricsOf(s.db, now) : undefined,
      };
    }, endpoints);
    if (!o.json)
      console.log(
        formatBeforeAfter(`held-out, production after iteration 1 (before) and after iteration ${o.outer} (after):`, r.before, r.after),
      );
    return { before: r.before, after: r.after, improved: r.outer.improved };
  }
  const result = JSON.parse(await flywheel(['run', specFile, '--json'], env)) as InnerLoopResult;
  await withSession(async (s) => {
    if (result.baselineCheckpointId) before = await heldoutMetricsOf(s.db, result.baselineCheckpointId);
    if (result.best) after = await heldoutMetricsOf(s.db, result.best.checkpointId);
  }, endpoints);
  if (o.json) console.log(JSON.stringify({ campaign: spec.name, seed, result, heldout: { before, after } }, null, 2));
  else console.log(formatBeforeAfter(`held-out pass rate, baseline (before) and best checkpoint (after), ${spec.name}:`, before, after));
  // Better on the metric the campaign selects on, in its direction.
  return { before, after, improved: heldoutImproved({ heldout: { baseline: before, best: after } }, summaryMetricsOfSpec(spec)[0]) };
}
