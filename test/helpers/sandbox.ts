// Suites that need the trainer sandbox (bubblewrap): they run where the host can make it, skip with one line where
// it cannot, and fail under CI=true, where a skipped safety test would read as a pass.
import { probeSandbox } from '../../backends/sandbox/bubblewrap';

const probe = probeSandbox();

/** Whether this host can make the sandbox. */
export const sandboxAvailable = probe.ok;

/** `describe`, or a skip naming the script that enables it (a failure under CI). */
export function describeWithSandbox(name: string, fn: () => void): void {
  if (probe.ok) return describe(name, fn);
  const why = `no trainer sandbox on this host (${probe.reason}); bash .ci/install-bubblewrap.sh enables it`;
  if (process.env.CI) return describe(name, () => test(why, () => { throw new Error(why); }));
  console.log(`skipped: ${name}: ${why}`);
  return describe.skip(`${name} [skipped: ${why}]`, fn);
}
