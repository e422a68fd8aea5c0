// Turns a spec's trainer into an argv for one entry point. `builtin` is the TypeScript char-level model.
import path from 'node:path';

export const REPO = path.join(__dirname, '..', '..');
export const BUILTIN_TRAINER = path.join(REPO, 'trainers', 'charlm', 'main.ts');

export function trainerArgv(command: 'builtin' | string[], entry: 'train' | 'predict', args: string[]): string[] {
  const base = command === 'builtin' ? [process.execPath, path.join(REPO, 'bin', 'run-ts.js'), BUILTIN_TRAINER] : command;
  return [...base, entry, ...args];
}
