// Prompts are versioned files under agents/prompts: `<name>.v<n>.md`. A changed prompt is a new file, so the
// version recorded with every output names the exact text that produced it.
import fs from 'node:fs';
import path from 'node:path';

const cache = new Map<string, string>();

/** The text of `agents/prompts/<version>.md` (e.g. `teacher-critique.v1`), read once per process. */
export function loadPrompt(version: string): string {
  let text = cache.get(version);
  if (text === undefined) {
    text = fs.readFileSync(path.join(__dirname, 'prompts', `${version}.md`), 'utf8');
    cache.set(version, text);
  }
  return text;
}
