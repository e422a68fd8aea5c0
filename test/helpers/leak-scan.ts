// Where the held-out isolation checks look for held-out text (needles): the histories of workflows and every file
// under a folder (FLYWHEEL_HOME: run directories, checkpoints, dataset versions). Each hit is `<where>: <needle>`.
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';

/** `<where>: <needle>` for each needle `text` holds. */
export function leaksIn(where: string, text: string, needles: readonly string[]): string[] {
  return needles.filter((n) => text.includes(n)).map((n) => `${where}: ${n}`);
}

/** Every regular file under `dir` smaller than 64 MiB. */
export function* filesUnder(dir: string): Generator<string> {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* filesUnder(p);
    else if (e.isFile() && fs.statSync(p).size < 64 << 20) yield p;
  }
}

/** The needles found in the workflows' histories (a workflow that is gone counts as empty). */
export async function historyLeaks(client: Client, workflowIds: Iterable<string>, needles: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const id of new Set(workflowIds)) {
    const history = await client.workflow
      .getHandle(id)
      .fetchHistory()
      .then((x) => JSON.stringify(x))
      .catch(() => '');
    found.push(...leaksIn(`history ${id}`, history, needles));
  }
  return found;
}

/** The needles found in the files under `dir`. */
export function fileLeaks(dir: string, needles: readonly string[]): string[] {
  return [...filesUnder(dir)].flatMap((f) => leaksIn(f, fs.readFileSync(f).toString('latin1'), needles));
}
