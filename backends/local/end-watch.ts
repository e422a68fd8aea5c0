// Noticing a local job's end as it happens: an inotify watch (fs.watch) on its launch directory calls back when the
// launcher writes the exit code there, so the follower checks at once instead of at its next poll (250 ms at first
// while a watch stands, up to 1 s for a long run). Best effort, never the only way an end is seen: where no watch can
// be made (no inotify, the watch limit reached, the folder gone) the follower polls at its fast rate (25 ms at first),
// and a watch that fails later wakes the follower, whose slower poll still sees the end.
import fs from 'node:fs';
import path from 'node:path';

/**
 * Calls `changed` when `name` is written in `dir`, once at the start if it is already there, and once more if the
 * watch fails; returns the stop, or undefined when no watch could be made.
 */
export function watchForFile(dir: string, name: string, changed: () => void): (() => void) | undefined {
  let watcher: fs.FSWatcher | undefined;
  try {
    // Not persistent: a watch never keeps the worker's process alive.
    watcher = fs.watch(dir, { persistent: false }, (_event, file) => {
      if (file === name) changed();
    });
    watcher.on('error', () => {
      watcher?.close();
      changed(); // the follower looks now: an end this watch would have told may be lost with it
    });
  } catch {
    return undefined;
  }
  // Written before the watch began: no event will come for it.
  if (fs.existsSync(path.join(dir, name))) queueMicrotask(changed);
  return () => watcher?.close();
}
