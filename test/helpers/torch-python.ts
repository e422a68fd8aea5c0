// The Python the torch suites run the reference trainer with: the project's .flywheel/venv that the test set-up
// installs torch into, or python3 where that has torch (CI's .ci/install-torch.sh), as the set-up probed.
import path from 'node:path';
import { servicePath } from './requires';

/** The interpreter that imports torch (an absolute path, or "python3"). */
export function torchPython(): string {
  return servicePath('torch') ?? 'python3';
}

/** PATH with that interpreter's bin folder first, so `python3` and `torchrun` in a child are its own. */
export function torchPathVar(): string {
  const python = torchPython();
  return path.isAbsolute(python) ? `${path.dirname(python)}${path.delimiter}${process.env.PATH ?? ''}` : (process.env.PATH ?? '');
}
