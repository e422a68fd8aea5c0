// A served run's outputs (backends/local/train-server.ts): copied from its folder in the server's into its run
// directory, as new files the server never held open, when the run ends, or, when its server died with its worker, when
// the run is found lost (what it wrote is then what the follower read, and must be in the run directory as for any run).
import fs from 'node:fs';
import path from 'node:path';
import { RUN_JSON } from '../../core/contract-files';
import type { LimitBreach, ResourceLimits } from '../../core/resource-limits';
import { folderBreach } from './run-usage';

/**
 * Copies everything but run.json (Flywheel's) from `servedDir` into `runDir`: links as links, never followed; a FIFO,
 * a socket, or `servedDir` itself replaced by a link fails the copy. A folder past the run's disk or file limit is not copied at all: the breach is returned.
 */
export async function copyServedOutputs(
  servedDir: string,
  runDir: string,
  limits: ResourceLimits | undefined,
): Promise<LimitBreach | undefined> {
  // The server may have put a link where its run's folder was: never walked, never copied from.
  if (!fs.lstatSync(servedDir).isDirectory()) throw new Error(`${servedDir} is no longer a folder`);
  const breach = limits && folderBreach(servedDir, limits);
  if (breach) return breach;
  const skip = path.join(servedDir, RUN_JSON);
  // Off the event loop: a large checkpoint's copy (where the filesystem has no reflinks) must not stall the worker.
  await fs.promises.cp(servedDir, runDir, {
    recursive: true,
    force: true,
    verbatimSymlinks: true,
    mode: fs.constants.COPYFILE_FICLONE,
    filter: (src) => src !== skip,
  });
  return undefined;
}

/**
 * What is left of a lost served run (its server died with its worker, so nothing writes there any more): its outputs
 * copied out, its folder removed, and the server's folder with it once empty. A copy that fails leaves the folder.
 */
export async function salvageServedRun(servedDir: string, runDir: string, limits: ResourceLimits | undefined): Promise<void> {
  if (!fs.existsSync(servedDir)) return;
  try {
    await copyServedOutputs(servedDir, runDir, limits);
  } catch {
    return;
  }
  fs.rmSync(servedDir, { recursive: true, force: true });
  try {
    fs.rmdirSync(path.dirname(servedDir));
  } catch {
    /* another run's folder is there, or the server's own files */
  }
}
