"""Loads a frozen Hugging Face checkpoint folder (format hf-causal-lm-v1) for Flywheel's own processes: the scorer
and the completion server. Nothing in the folder runs: weights come from safetensors only (no pickle), and a folder
that asks for remote code (a .py file, an `auto_map` in its configs) is refused before anything is loaded."""
import json
import os

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('HF_HUB_DISABLE_PROGRESS_BARS', '1')
os.environ.setdefault('TRANSFORMERS_VERBOSITY', 'error')
os.environ.setdefault('TRANSFORMERS_NO_ADVISORY_WARNINGS', '1')

PICKLED = ('.bin', '.pt', '.pth', '.pkl', '.ckpt')
CONFIGS = ('config.json', 'tokenizer_config.json', 'generation_config.json')


class FrozenCheckpointError(Exception):
    """The folder is not a checkpoint Flywheel will load; the message is one line."""


def check_frozen_folder(folder):
    """Raises FrozenCheckpointError naming the first reason the folder may not be loaded."""
    if not os.path.isdir(folder):
        raise FrozenCheckpointError(f'{folder}: not a folder')
    if not os.path.isfile(os.path.join(folder, 'config.json')):
        raise FrozenCheckpointError(f'{folder}: no config.json')
    weights = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            rel = os.path.relpath(os.path.join(root, name), folder)
            if name.endswith('.py'):
                raise FrozenCheckpointError(f'{folder}: holds code ({rel}); trust_remote_code is refused')
            if name.endswith(PICKLED):
                raise FrozenCheckpointError(f'{folder}: holds pickled weights ({rel}); only safetensors are loaded')
            if name.endswith('.safetensors'):
                weights += 1
    if weights == 0:
        raise FrozenCheckpointError(f'{folder}: no .safetensors weights')
    for name in CONFIGS:
        file = os.path.join(folder, name)
        if not os.path.isfile(file):
            continue
        try:
            with open(file, encoding='utf-8') as f:
                config = json.load(f)
        except ValueError as e:
            raise FrozenCheckpointError(f'{file}: not valid JSON ({e})') from None
        if isinstance(config, dict) and ('auto_map' in config or config.get('trust_remote_code')):
            raise FrozenCheckpointError(f'{file}: asks for remote code (auto_map); trust_remote_code is refused')


def load_frozen(folder, device='cpu', dtype=None):
    """(model, tokenizer) from a checked folder, in eval mode, with remote code and the hub off."""
    check_frozen_folder(folder)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=False, local_files_only=True)
    kwargs = {'trust_remote_code': False, 'local_files_only': True, 'use_safetensors': True}
    if dtype is not None:
        kwargs['dtype'] = dtype
    model = AutoModelForCausalLM.from_pretrained(folder, **kwargs).to(device)
    model.eval()
    return model, tokenizer
