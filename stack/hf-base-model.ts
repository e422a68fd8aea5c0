// Flywheel's base model, `flywheel-base`: a small Llama-architecture causal LM that trainers/hf/pretrain_base.py
// pretrains here on the hf-venv interpreter's own standard library (PSF licence), deterministic from its seed, cached
// under FLYWHEEL_HOME/models and rebuilt only when the script, its seed or the corpus changes. `flywheel setup hf`,
// .ci/install-hf.sh and the HF tests all build it through the script, so each finds the others' copy.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { hfModelsDir } from '../core/trainer-program';
import { REPO, hfPython } from '../backends/trainer-programs';

export const PRETRAIN_BASE = path.join(REPO, 'trainers', 'hf', 'pretrain_base.py');

/** What the script reports (its PROVENANCE.json, plus the folder and whether it was already there). */
export interface BaseModelBuilt {
  folder: string;
  cached: boolean;
  params: number;
  seconds: number;
  heldoutLoss: number;
  corpus: { what: string; files: number; sha256: string; trainTokens: number; licence: string };
  steps: number;
  seed: number;
}

/** Builds the base model unless it is cached; `python` defaults to the hf-venv's interpreter. */
export function buildHfBaseModel(home: string, opts: { python?: string } = {}): BaseModelBuilt | { problem: string } {
  const python = opts.python ?? hfPython(home);
  const r = spawnSync(python, [PRETRAIN_BASE, '--models', hfModelsDir(home), '--quiet'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  const last = (s: string | null) => (s ?? '').trim().split('\n').filter(Boolean).pop();
  if (r.status !== 0) return { problem: `${path.basename(PRETRAIN_BASE)}: ${last(r.stderr) ?? r.error?.message ?? `exit ${r.status}`}` };
  try {
    return JSON.parse(last(r.stdout) ?? '') as BaseModelBuilt;
  } catch {
    return { problem: `${path.basename(PRETRAIN_BASE)}: printed no result line` };
  }
}

/** One line: where it is, its size, how long pretraining took and its held-out loss. */
export function formatBaseModel(b: BaseModelBuilt): string {
  const size = b.params >= 1e6 ? `${(b.params / 1e6).toFixed(1)}M` : `${Math.round(b.params / 1e3)}k`;
  return (
    `flywheel-base ${b.folder}: ${b.cached ? 'already built' : 'built'}, ${size} parameters, pretrained ${b.steps} steps ` +
    `in ${Math.round(b.seconds)} s on the Python standard library (${b.corpus.files} files, PSF licence), ` +
    `held-out loss ${b.heldoutLoss.toFixed(3)} nats/token`
  );
}
