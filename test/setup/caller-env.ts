// Tests that do not depend on the caller's shell: the global set-ups scrub what an exported variable would otherwise
// carry into every stack, worker and `flywheel` process a test starts (docs/testing.md, "The caller's environment").

/**
 * The caller's settings the suite itself reads: where tools live (FLYWHEEL_HOME, the HF interpreter, bubblewrap,
 * Chromium), which services it may skip or must have, what it keeps and how much it says.
 */
export const SUITE_SETTINGS = [
  'FLYWHEEL_HOME',
  'FLYWHEEL_HF_PYTHON',
  'FLYWHEEL_BWRAP',
  'FLYWHEEL_CHROMIUM',
  'FLYWHEEL_REQUIRE_ALL',
  'FLYWHEEL_TEST_ABSENT',
  'FLYWHEEL_KEEP_SCRATCH',
  'FLYWHEEL_DEBUG',
];

/** Temporal's connection settings (core/config.ts resolveConfig): a test names its server itself. */
const TEMPORAL_SETTINGS = /^TEMPORAL_(ADDRESS|NAMESPACE|TLS(_.*)?|API_KEY)$/;

/**
 * Removes from `env`, and returns, every FLYWHEEL_* variable but SUITE_SETTINGS (e.g. an exported
 * FLYWHEEL_TASK_QUEUE_PREFIX renamed every queue of the stacks test/stack/ starts), and Temporal's connection
 * settings. DATABASE_URL stays: it chooses the tests' PostgreSQL. Called first by the global set-ups, before any
 * server starts, so jest's workers and everything they start inherit the clean environment; a test that needs one
 * of these sets it on purpose, in the env it hands the process it starts.
 */
export function scrubCallerEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  const removed = Object.keys(env).filter((k) => (k.startsWith('FLYWHEEL_') && !SUITE_SETTINGS.includes(k)) || TEMPORAL_SETTINGS.test(k));
  for (const k of removed) delete env[k];
  return removed;
}
