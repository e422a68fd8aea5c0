"""The Hugging Face trainer's knobs (run.json `params`), each with its default and meaning, mapped onto TRL's config
in one place (`trl_arguments`). An unknown knob, a bad value, and any attempt at trust_remote_code are refused in
one line. The checks and run.json's reading are the PyTorch trainer's (trainers/torch/run_config.py)."""
import json
import math
import re

from run_config import TrainerError, _int, _number, _one_of


def _string(v):
    return None if isinstance(v, str) and v else 'must be a non-empty string'


def _optional(check):
    return lambda v: None if v is None else check(v)


def _bool(v):
    return None if isinstance(v, bool) else 'must be true or false'


LORA_KNOBS = {
    'r': (None, _int(1, 4096), 'adapter rank'),
    'alpha': (None, _number(0, lo_open=True), 'scaling numerator: the update is scaled by alpha / r'),
    'targetModules': (None, None, 'module names to adapt (e.g. ["q_proj", "v_proj"]) or "all-linear"'),
    'dropout': (0.0, _number(0, 1), 'dropout on the adapter input'),
}

# knob: (default, check, meaning). A knob that is None by default is off unless given.
KNOBS = {
    'model': (None, _optional(_string), 'what from_pretrained loads: a hub id or a local folder (safetensors, no code); '
              'required unless run.json has a baseCheckpoint, which is trained instead'),
    'tokenizer': (None, _optional(_string), 'the tokenizer: a hub id or a folder; default: the model\'s'),
    'objective': ('auto', _one_of('auto', 'sft', 'dpo'), '`sft` on examples, `dpo` on pairs; `auto` is the one the '
                  'dataset version has data for, and refuses a version with both examples and pairs'),
    'lr': (2e-5, _number(0, lo_open=True), 'peak AdamW learning rate (learning_rate)'),
    'lrSchedule': ('cosine', _one_of('cosine', 'linear', 'constant', 'constant_with_warmup'), 'lr_scheduler_type'),
    'lrWarmup': (0, _int(0, 10_000_000), 'warm-up steps (warmup_steps)'),
    'steps': (100, _int(0, 10_000_000), 'optimizer steps (max_steps); 0 writes the starting model as checkpoint 0'),
    'epochs': (None, _optional(_number(0, lo_open=True)), 'instead of steps: passes over the drawn examples, '
               'ceil(epochs x examples / (batchSize x gradAccum x processes)) steps'),
    'batchSize': (8, _int(1, 65536), 'sequences per step on each process (per_device_train_batch_size)'),
    'gradAccum': (1, _int(1, 65536), 'micro-batches per optimizer step (gradient_accumulation_steps)'),
    'weightDecay': (0.0, _number(0), 'AdamW weight decay (weight_decay)'),
    'gradClip': (1.0, _number(0), 'global gradient-norm clip (max_grad_norm); 0 turns it off'),
    'maxLength': (512, _int(8, 1_048_576), 'tokens per sequence, prompt included (max_length); longer ones are cut at the end, '
                  'and an example whose prompt fills it is left out'),
    'logEvery': (10, _int(1, 10_000_000), 'steps between metrics lines (logging_steps), and the last step'),
    'lora': (None, None, '{r, alpha, targetModules, dropout?}: train a LoRA adapter (peft) instead of every weight; '
             'checkpoints hold the adapter merged into the weights'),
    'loraRank': (None, _optional(_int(0, 4096)), 'a search-space knob for LoRA: the adapter rank, overriding lora.r; '
                 'given without `lora`, it turns LoRA on over "all-linear" modules with alpha = loraAlpha; 0 is full '
                 'fine-tuning (no adapter, even over a fixed `lora`), so one categorical searches both'),
    'loraAlpha': (None, _optional(_number(0, lo_open=True)), 'with loraRank: the adapter alpha (default 2 x loraRank)'),
    'dpoBeta': (0.1, _number(0, lo_open=True), 'DPO: the KL strength beta against the starting model'),
    'dpoSftWeight': (0.0, _number(0), 'DPO: weight of an SFT (negative log-likelihood) term on the chosen side beside the '
                     'DPO loss (TRL loss_type ["sigmoid", "sft"], as in RPO); above 0 it keeps the preferred completion\'s '
                     'own log-probability rising, where plain DPO may lower both sides'),
    'gradientCheckpointing': (False, _bool, 'recompute activations in the backward pass (less memory, ~30% slower)'),
    'fsdp': (False, _bool, 'shard parameters, gradients and optimizer state across processes (FSDP full_shard), '
             'for a model that does not fit one device under DDP'),
    'precision': ('auto', _one_of('auto', 'bf16', 'fp32'), '`auto`: bf16 on a GPU that has it, fp32 elsewhere'),
}

_REMOTE_CODE = re.compile(r'trust.?remote.?code', re.IGNORECASE)


def resolve_params(raw):
    """The complete knobs, checked: the first problem raises TrainerError naming the knob."""
    for key in raw:
        if _REMOTE_CODE.search(key):
            raise TrainerError(f'run.json: params.{key} is refused: the hf trainer never runs code shipped with a model')
        if key not in KNOBS:
            raise TrainerError(f'run.json: params.{key} is not an hf trainer knob (knobs: {", ".join(KNOBS)})')
    out = {}
    for key, (default, check, _) in KNOBS.items():
        if key not in raw:
            out[key] = default
            continue
        problem = check(raw[key]) if check else None
        if problem:
            raise TrainerError(f'run.json: params.{key} {problem} (got {json.dumps(raw[key])})')
        out[key] = raw[key]
    if 'steps' in raw and out['epochs'] is not None:
        raise TrainerError('run.json: params.steps and params.epochs are exclusive (give one)')
    if out['loraAlpha'] is not None and out['loraRank'] is None:
        raise TrainerError('run.json: params.loraAlpha needs params.loraRank')
    lora = raw.get('lora')
    if out['loraRank'] == 0:
        lora = out['lora'] = None
    elif out['loraRank'] is not None:
        # The flat knobs a search space can vary; they override the object's rank and alpha.
        base = lora if isinstance(lora, dict) else {'targetModules': 'all-linear'}
        rank = out['loraRank']
        lora = {**base, 'r': rank, 'alpha': out['loraAlpha'] if out['loraAlpha'] is not None else 2 * rank}
    if lora is not None:
        out['lora'] = _resolve_lora(lora)
    if out['fsdp'] and out['lora']:
        raise TrainerError('run.json: params.fsdp with params.lora is not supported (an adapter fits one device: use DDP)')
    return out


def _resolve_lora(raw):
    if not isinstance(raw, dict):
        raise TrainerError(f'run.json: params.lora must be an object {{r, alpha, targetModules, dropout?}} (got {json.dumps(raw)})')
    for key in raw:
        if key not in LORA_KNOBS:
            raise TrainerError(f'run.json: params.lora.{key} is not a LoRA knob (knobs: {", ".join(LORA_KNOBS)})')
    out = {}
    for key, (default, check, _) in LORA_KNOBS.items():
        if key not in raw:
            if default is None:
                raise TrainerError(f'run.json: params.lora.{key} is required')
            out[key] = default
            continue
        v = raw[key]
        if key == 'targetModules':
            ok = v == 'all-linear' or (isinstance(v, list) and v and all(isinstance(m, str) and m for m in v))
            problem = None if ok else 'must be "all-linear" or a non-empty list of module names'
        else:
            problem = check(v)
        if problem:
            raise TrainerError(f'run.json: params.lora.{key} {problem} (got {json.dumps(v)})')
        out[key] = v
    return out


def total_steps(p, drawable, processes):
    """Optimizer steps: `steps`, or `epochs` passes over the drawable examples (or pairs)."""
    if p['epochs'] is None:
        return p['steps']
    per_step = p['batchSize'] * p['gradAccum'] * processes
    return max(1, math.ceil(p['epochs'] * drawable / per_step))


def trl_arguments(p, run, state_dir, steps, checkpoint_every, bf16, cpu):
    """The TrainingArguments fields every objective shares (SFTConfig and DPOConfig both take them)."""
    return {
        'output_dir': state_dir,
        'learning_rate': p['lr'],
        'lr_scheduler_type': p['lrSchedule'],
        'warmup_steps': p['lrWarmup'],
        'max_steps': steps,
        'per_device_train_batch_size': p['batchSize'],
        'gradient_accumulation_steps': p['gradAccum'],
        'weight_decay': p['weightDecay'],
        'max_grad_norm': p['gradClip'],
        'max_length': p['maxLength'],
        'logging_steps': p['logEvery'],
        'activation_checkpointing': p['gradientCheckpointing'],
        'bf16': bf16,
        'fp16': False,
        'seed': run['seed'],
        'data_seed': run['seed'],
        # The draws are already in the run's seeded order (training_data.py); a sequential sampler keeps it, and
        # resume_from_checkpoint skips the batches already trained on.
        'train_sampling_strategy': 'sequential',
        'save_strategy': 'steps',
        'save_steps': checkpoint_every if checkpoint_every > 0 else max(1, steps),
        # Two resume states: the newest may be written but not yet exported when the process dies.
        'save_total_limit': 2,
        'include_num_input_tokens_seen': 'non_padding',
        'report_to': 'none',
        'disable_tqdm': True,
        'log_level': 'error',
        'dataloader_num_workers': 0,
        # On a host without CUDA this is what makes transformers set up DDP (gloo) under torchrun, not just the device.
        'use_cpu': cpu,
        'fsdp': 'full_shard auto_wrap' if p['fsdp'] else '',
    }
