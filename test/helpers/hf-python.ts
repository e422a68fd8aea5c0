// The interpreter of the Hugging Face environment (.flywheel/hf-venv, stack/hf-env.ts) as the test set-up found it:
// the HF trainer, Flywheel's HF scorer and the HF completion server run with it. Call requires('hf') first.
import { servicePath } from './requires';

export function hfTestPythonPath(): string {
  const p = servicePath('hf');
  if (!p) throw new Error("no hf-venv: call requires('hf') at the top of the suite");
  return p;
}
