"""What a run is told: run.json (core/job-contract.ts RunJson) and its `params`, each knob documented here
with its default, then one `resolve_params` step that checks them (a bad or unknown knob is named)."""
import json
import math
import os

from contract_files import RUN_JSON


class TrainerError(Exception):
    """An expected failure: main prints `torch-trainer: <message>` as one line on stderr and exits 1."""


# knob: (default, check, meaning)
def _int(lo, hi):
    return lambda v: None if isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi else f'must be an integer from {lo} to {hi}'


def _number(lo, hi=math.inf, lo_open=False):
    def check(v):
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and (v > lo if lo_open else v >= lo) and v < hi
        return None if ok else f'must be a number {">" if lo_open else ">="} {lo}' + (f' and < {hi}' if hi != math.inf else '')
    return check


def _one_of(*choices):
    return lambda v: None if v in choices else 'must be one of ' + ', '.join(json.dumps(c) for c in choices)


KNOBS = {
    'n_layer': (2, _int(1, 64), 'transformer blocks'),
    'n_head': (4, _int(1, 64), 'attention heads per block (d_model must divide by it)'),
    'd_model': (128, _int(8, 8192), 'residual stream width'),
    'context': (64, _int(2, 8192), 'block size: bytes the model sees (BOS included)'),
    'lr': (1e-3, _number(0, lo_open=True), 'peak AdamW learning rate'),
    'steps': (1000, _int(0, 10_000_000), 'optimizer steps; 0 writes the untrained model as checkpoint 0'),
    'batchSize': (32, _int(1, 65536), 'windows per step on each process (torchrun multiplies it)'),
    'weightDecay': (0.1, _number(0), 'decoupled weight decay on matrices (not on biases and norms)'),
    'lrWarmup': (0, _int(0, 10_000_000), 'steps of linear warm-up from 0'),
    'lrSchedule': ('cosine', _one_of('cosine', 'constant'), '`cosine` decays to lr/10 at the last step'),
    'logEvery': (25, _int(1, 10_000_000), 'steps between metrics lines (and the last step)'),
    'gradClip': (1.0, _number(0), 'global gradient-norm clip; 0 turns it off'),
    'dropout': (0.0, _number(0, 1), 'dropout on embeddings, attention and residual branches'),
}


def resolve_params(raw):
    for key in raw:
        if key not in KNOBS:
            raise TrainerError(f'run.json: params.{key} is not a torch-gpt knob (knobs: {", ".join(KNOBS)})')
    out = {}
    for key, (default, check, _) in KNOBS.items():
        if key not in raw:
            out[key] = default
            continue
        problem = check(raw[key])
        if problem:
            raise TrainerError(f'run.json: params.{key} {problem} (got {json.dumps(raw[key])})')
        out[key] = raw[key]
    if out['d_model'] % out['n_head']:
        raise TrainerError(f'run.json: params.d_model ({out["d_model"]}) must divide by params.n_head ({out["n_head"]})')
    return out


def read_run_json(run_dir):
    file = os.path.join(run_dir, RUN_JSON)
    try:
        with open(file, encoding='utf-8') as f:
            r = json.load(f)
    except (OSError, ValueError) as e:
        raise TrainerError(f'cannot read {file}: {e}') from None

    def invalid(what):
        raise TrainerError(f'{file}: {what}')

    if not isinstance(r, dict):
        invalid('must be a JSON object')
    if not isinstance(r.get('params'), dict):
        invalid('params must be an object')
    if not isinstance(r.get('seed'), int) or isinstance(r.get('seed'), bool):
        invalid('seed must be an integer')
    ds = r.get('dataset')
    if not isinstance(ds, dict) or not isinstance(ds.get('path'), str) or not isinstance(ds.get('trainFile'), str):
        invalid('dataset.path and dataset.trainFile must be strings')
    if ds.get('examplesFile') is not None and not isinstance(ds['examplesFile'], str):
        invalid('dataset.examplesFile must be a string when given')
    if r.get('baseCheckpoint') is not None and not isinstance(r['baseCheckpoint'], str):
        invalid('baseCheckpoint must be a path or null')
    every = r.get('checkpointEvery', 0)
    if not isinstance(every, int) or isinstance(every, bool) or every < 0:
        invalid('checkpointEvery must be a non-negative integer')
    r['checkpointEvery'] = every
    return r


def learning_rate(p, t):
    """The learning rate at 1-based step t: linear warm-up, then cosine to lr/10 or constant (as charlm)."""
    if t <= p['lrWarmup']:
        return p['lr'] * t / p['lrWarmup']
    if p['lrSchedule'] == 'constant':
        return p['lr']
    span = max(1, p['steps'] - p['lrWarmup'])
    progress = min(1.0, (t - p['lrWarmup']) / span)
    return p['lr'] * (0.1 + 0.45 * (1 + math.cos(math.pi * progress)))
