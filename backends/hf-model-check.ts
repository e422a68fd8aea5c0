// Whether an `hf` campaign's trainer can load its model and tokenizer, checked on this host before anything is
// written (checkTrainer on the training worker, `flywheel validate` here): each `model` and `tokenizer` the spec names
// (`trainer.fixed`, or a searched knob's choices) is a local folder that exists, that the trainer's sandbox shows
// (`trainer.readOnlyPaths`) and that passes Flywheel's frozen-folder checks (formats/hf/frozen_model.py: safetensors,
// no code, no auto_map), or a hub id, which needs `trainer.network: true` and the hub answering for it. A problem is
// one line naming the knob, the source and what to do, as the trainer would fail minutes later.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { CampaignSpec } from '../core/spec';
import { HF_BASE_MODEL_ALIAS } from '../core/trainer-program';
import { hfBaseModel, hfPython, REPO } from './trainer-programs';

type HfSpec = Pick<CampaignSpec, 'trainer' | 'searchSpace'>;
export interface HfSourceProblem {
  text: string;
  /** Whether it is about this host's files (a folder another host may have), not the spec itself. */
  here: boolean;
}

const KNOBS = ['model', 'tokenizer'] as const;
const DEFAULT_ENDPOINT = 'https://huggingface.co';
const HUB_TIMEOUT_MS = 8000;
const TOKENIZER_FILES = ['tokenizer.json', 'tokenizer_config.json', 'tokenizer.model', 'vocab.json'];

/** Every `params.<knob>` source the spec can give a run: the fixed value and a categorical knob's choices. */
function sourcesOf(spec: HfSpec): Array<{ knob: string; source: string }> {
  const out: Array<{ knob: string; source: string }> = [];
  for (const knob of KNOBS) {
    const fixed = spec.trainer.fixed[knob];
    if (typeof fixed === 'string' && fixed.length > 0) out.push({ knob, source: fixed });
    const searched = spec.searchSpace[knob] as { type?: string; choices?: unknown[] } | undefined;
    for (const c of searched?.type === 'categorical' ? (searched.choices ?? []) : [])
      if (typeof c === 'string' && c.length > 0 && !out.some((o) => o.knob === knob && o.source === c)) out.push({ knob, source: c });
  }
  return out;
}

/** A local folder as the trainer reads one (trainers/hf/base_model.py): absolute, relative (`.`), or existing here. */
const isLocal = (source: string) => path.isAbsolute(source) || source.startsWith('.') || fs.existsSync(source);

/** The first reason `folder` is not a frozen folder Flywheel loads (formats/hf/frozen_model.py's own check), or undefined. */
function frozenFolderProblem(folder: string, home: string): string | undefined {
  const venv = hfPython(home);
  const python = fs.existsSync(venv) ? venv : 'python3';
  const code =
    'import sys; sys.path.insert(0, sys.argv[1]); from frozen_model import check_frozen_folder, FrozenCheckpointError\n' +
    'try: check_frozen_folder(sys.argv[2])\nexcept FrozenCheckpointError as e: print(e)';
  const r = spawnSync(python, ['-c', code, path.join(REPO, 'formats', 'hf'), folder], { encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) return `the folder check failed (${python}: ${(r.stderr || String(r.error)).trim().split('\n').at(-1)})`;
  return r.stdout.trim() || undefined;
}

/** Whether the sandbox shows `folder` to the trainer: it is one of `trainer.readOnlyPaths` or inside one. */
const shown = (folder: string, readOnly: string[]) =>
  readOnly.some((p) => {
    const rel = path.relative(path.resolve(p), path.resolve(folder));
    return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
  });

function folderProblem(knob: string, folder: string, spec: HfSpec, home: string): HfSourceProblem | undefined {
  const what = `params.${knob} ${folder}`;
  if (!fs.existsSync(folder) || !fs.statSync(folder).isDirectory()) return { text: `${what}: no such folder on this host`, here: true };
  if (!spec.trainer.unsandboxed && !shown(folder, spec.trainer.readOnlyPaths))
    return { text: `${what}: the trainer's sandbox does not show it; add it to trainer.readOnlyPaths`, here: false };
  const frozen = frozenFolderProblem(folder, home);
  if (frozen) return { text: `params.${knob}: ${frozen}`, here: true };
  if (knob === 'tokenizer' || typeof spec.trainer.fixed.tokenizer !== 'string') {
    if (!TOKENIZER_FILES.some((f) => fs.existsSync(path.join(folder, f))))
      return { text: `${what}: holds no tokenizer (${TOKENIZER_FILES.join(', ')}); save one there or give params.tokenizer`, here: true };
  }
  return undefined;
}

/** The hub the trainer would reach: `HF_ENDPOINT` from trainer.env, or passed through from this host, or the default. */
function hubEndpoint(spec: HfSpec, env: NodeJS.ProcessEnv): string {
  const passed = spec.trainer.passEnv.includes('HF_ENDPOINT') ? env.HF_ENDPOINT : undefined;
  return (spec.trainer.env.HF_ENDPOINT ?? passed ?? DEFAULT_ENDPOINT).replace(/\/+$/, '');
}

async function hubProblem(knob: string, id: string, spec: HfSpec, env: NodeJS.ProcessEnv): Promise<HfSourceProblem | undefined> {
  const what = `params.${knob} ${id}`;
  if (!spec.trainer.network && !spec.trainer.unsandboxed)
    return { text: `${what}: a hub id, but the trainer has no network (trainer.network: false); give a local folder`, here: false };
  const endpoint = hubEndpoint(spec, env);
  const token = spec.trainer.env.HF_TOKEN ?? (spec.trainer.passEnv.includes('HF_TOKEN') ? env.HF_TOKEN : undefined);
  let status: number;
  try {
    const r = await fetch(`${endpoint}/api/models/${id}`, {
      method: 'GET',
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(HUB_TIMEOUT_MS),
    });
    status = r.status;
    await r.body?.cancel();
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (e as Error).message;
    return { text: `${what}: a hub id, but the hub ${endpoint} is not reachable from this host (${why}); give a local folder`, here: true };
  }
  if (status === 200) return undefined;
  if (status === 401 || status === 403 || status === 404)
    return {
      text: `${what}: the hub ${endpoint} has no such model, or it is private or gated (HTTP ${status}${token ? '' : '; pass a token with trainer.passEnv: [HF_TOKEN]'})`,
      here: false,
    };
  return { text: `${what}: the hub ${endpoint} answered HTTP ${status} for it; give a local folder or try later`, here: true };
}

/**
 * Why an `hf` trainer could not load its model or tokenizer from what the spec names, one line each (none for
 * another trainer). `flywheel-base` is this host's base model (`flywheel setup hf`), which the worker binds itself.
 */
export async function hfSourceProblems(spec: HfSpec, home: string, env: NodeJS.ProcessEnv = process.env): Promise<HfSourceProblem[]> {
  if (spec.trainer.command !== 'hf') return [];
  const problems: HfSourceProblem[] = [];
  for (const { knob, source } of sourcesOf(spec)) {
    if (source === HF_BASE_MODEL_ALIAS) {
      if (!hfBaseModel(home))
        problems.push({ text: `params.${knob} ${source}: no base model has been built on this host: run flywheel setup hf`, here: true });
      continue;
    }
    const p = isLocal(source) ? folderProblem(knob, path.resolve(source), spec, home) : await hubProblem(knob, source, spec, env);
    if (p) problems.push(p);
  }
  return problems;
}
