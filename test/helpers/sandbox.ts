// Whether this host can make the trainer sandbox (bubblewrap): specs for tests, benches and the fault harness set
// `trainer.unsandboxed` where it cannot. Suites that need the sandbox start with requires('bubblewrap').
import { probeSandbox } from '../../backends/sandbox/bubblewrap';

/** Whether this host can make the sandbox. */
export const sandboxAvailable = probeSandbox().ok;
