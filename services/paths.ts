// Where runs and datasets live under FLYWHEEL_HOME (eval scratch never does: activities/eval/run-predict.ts). Ids contain '/', so they are flattened.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function safeName(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]+/g, '_');
}

export const runDirOf = (home: string, runId: string) => path.join(home, 'runs', safeName(runId));
export const datasetDirOf = (home: string, versionId: string) => path.join(home, 'datasets', safeName(versionId));

/**
 * The eval activity's scratch for predict (held-out prompts while they are answered): outside FLYWHEEL_HOME, mode
 * 0700, each use removed when it ends, and hidden from every trainer's sandbox.
 */
export function predictScratchRoot(): string {
  const dir = path.join(os.tmpdir(), 'flywheel-predict');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/**
 * Warm predict servers' inboxes (activities/eval/predict-server.ts): the checkpoints each is asked about, hard-linked
 * in and bound read-only into its sandbox. Under FLYWHEEL_HOME, on the runs' filesystem, so the links cost no copy;
 * never a prompt (public or held-out): those live in the predict scratch.
 */
export function predictInboxRoot(home: string): string {
  const dir = path.join(home, 'predict-inbox');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/**
 * Warm trainers' folders (backends/local/train-server.ts): each server's own, bound read-write into its sandbox, where
 * its runs write until their outputs are copied into their run directories. Under FLYWHEEL_HOME, on the runs'
 * filesystem, so the copy may be a reflink.
 */
export const warmTrainRoot = (home: string) => path.join(home, 'warm-train');
