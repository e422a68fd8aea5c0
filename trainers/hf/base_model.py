"""The model and tokenizer a run starts from: run.json `baseCheckpoint` (an earlier run's frozen folder: how a
warm-started outer iteration fine-tunes production) when there is one, else `params.model` (a hub id or a local
folder), with `params.tokenizer` overriding the tokenizer. A local folder is checked as Flywheel checks a frozen
checkpoint (formats/hf/frozen_model.py: safetensors only, no code, no auto_map); nothing is ever loaded with
trust_remote_code. `flywheel-base` names the base model `flywheel setup hf` pretrains here
(trainers/hf/pretrain_base.py): the worker binds its folder read-only and names it in FLYWHEEL_BASE_MODEL."""
import os

from frozen_model import FrozenCheckpointError, check_frozen_folder
from run_config import TrainerError

LOAD = {'trust_remote_code': False}
BASE_MODEL_ALIAS = 'flywheel-base'
BASE_MODEL_ENV = 'FLYWHEEL_BASE_MODEL'


def _aliased(source, what):
    """`flywheel-base` as the folder the worker named; any other source as it is."""
    if source != BASE_MODEL_ALIAS:
        return source
    folder = os.environ.get(BASE_MODEL_ENV)
    if not folder:
        raise TrainerError(f'{what} {BASE_MODEL_ALIAS}: no base model has been built on this host: run flywheel setup hf')
    return folder


def _checked(source, what):
    """`source` itself: a folder is checked; anything else is taken as a hub id (the hub or its cache)."""
    source = _aliased(source, what)
    if os.path.isdir(source):
        try:
            check_frozen_folder(source)
        except FrozenCheckpointError as e:
            raise TrainerError(f'{what}: {e}') from None
    elif os.path.isabs(source) or source.startswith('.'):
        raise TrainerError(f'{what} {source}: no such folder')
    return source


def start_sources(run_dir, run, p):
    """(model source, tokenizer source, what) for the run's starting point."""
    if run.get('baseCheckpoint'):
        base = os.path.join(run_dir, run['baseCheckpoint'])
        model = _checked(base, 'baseCheckpoint')
        what = f'baseCheckpoint {base}'
    elif p['model']:
        model = _checked(p['model'], 'params.model')
        what = f'params.model {p["model"]}'
    else:
        raise TrainerError('run.json: params.model is required (a hub id or a local folder) when there is no baseCheckpoint')
    tokenizer = _checked(p['tokenizer'], 'params.tokenizer') if p['tokenizer'] else model
    return model, tokenizer, what


def load_tokenizer(source):
    from transformers import AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(source, **LOAD)
    except Exception as e:  # no hub, no such id, a tokenizer that needs code: one line, whatever the library raised
        raise TrainerError(f'cannot load the tokenizer {source}: {_one_line(e)}') from None
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token  # many hub models have none; padding is masked out of the loss either way
    return tok


def load_model(source, what, dtype=None):
    from transformers import AutoModelForCausalLM

    kwargs = dict(LOAD, use_safetensors=True)
    if dtype is not None:
        kwargs['dtype'] = dtype
    try:
        return AutoModelForCausalLM.from_pretrained(source, **kwargs)
    except Exception as e:
        raise TrainerError(f'cannot load {what}: {_one_line(e)}') from None


def _one_line(e):
    text = ' '.join(str(e).split())
    return f'{type(e).__name__}: {text[:300]}'
