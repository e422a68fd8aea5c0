// The arithmetic task's files on a bench stack, registered the way a user does it: `flywheel dataset add` and
// `flywheel suite add` as child processes against the stack; and the CLI session the outer demo runs in on it.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { writeArithmeticFiles } from '../../tasks/arithmetic/generate';
import { resolveConfig } from '../../core/config';
import type { Session } from '../../cli/session';
import type { SplitSizes } from '../../tasks/arithmetic/split';
import type { BenchStack } from './bench-stack';

const BIN = path.join(__dirname, '..', '..', 'bin', 'flywheel.js');

export function addArithmeticTask(
  stack: BenchStack,
  seed: number,
  log: (line: string) => void = () => undefined,
  sizes: SplitSizes = {},
): NodeJS.ProcessEnv {
  const files = writeArithmeticFiles(path.join(stack.home, 'arithmetic'), seed, sizes);
  const env = {
    ...process.env,
    FLYWHEEL_HOME: stack.home,
    DATABASE_URL: stack.databaseUrl,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    FLYWHEEL_TASK_QUEUE_PREFIX: stack.prefix,
  };
  for (const args of [
    ['dataset', 'add', 'arithmetic', files.trainFile],
    ['suite', 'add', files.suiteFile],
  ]) {
    const r = spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`flywheel ${args.join(' ')} exited ${r.status}: ${r.stderr.trim()}`);
    log(`$ flywheel ${args.join(' ')}\n${r.stdout.trim()}`);
  }
  return env;
}

/** The session `runOuterDemo` takes, on the bench stack, with `env` (addArithmeticTask's) as its configuration. */
export function benchSession(stack: BenchStack, env: NodeJS.ProcessEnv): Session {
  return {
    config: resolveConfig(env, process.cwd()),
    endpoints: {
      temporalAddress: stack.temporalAddress,
      namespace: 'default',
      databaseUrl: stack.databaseUrl,
      taskQueuePrefix: stack.prefix,
    },
    client: stack.client,
    db: stack.db.db,
  };
}
