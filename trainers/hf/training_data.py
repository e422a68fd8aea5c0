"""What the HF trainer trains on, as a `datasets.Dataset` in the order it is trained: a dataset version's examples
(train.jsonl, for SFT) or its preference pairs (pairs.jsonl, for DPO), tokenized once here, drawn with replacement from the run's seed,
an example or a pair in proportion to its weight, whatever its length (docs/backends.md
"The dataset in run.json"). The draws are made once, before training, so a resumed run (which skips the batches it
already trained on) continues on exactly the sequence the uninterrupted run would have seen."""
import json
import math
import os

import numpy as np

from contract_files import RUN_JSON
from examples import _problem, prompt_and_completion
from run_config import TrainerError
from tokenization import TokenizationError, encode


def _lines(file, what):
    try:
        with open(file, 'rb') as f:
            for n, raw in enumerate(f, start=1):
                if raw.strip():
                    try:
                        yield n, json.loads(raw)
                    except ValueError:
                        raise TrainerError(f'{file}:{n}: not JSON') from None
    except OSError as e:
        raise TrainerError(f'cannot read the {what} {file}: {e.strerror or e}') from None


def _encoded(tokenizer, prompt, completion, where):
    try:
        return encode(tokenizer, prompt, completion)
    except TokenizationError as e:
        raise TrainerError(f'{where}: {e}') from None


def read_sft_rows(file, tokenizer, max_length):
    """[(row, draw weight, line number)]: a row is TRL's tokenized form, {input_ids, completion_mask}, cut to max_length, made by
    formats/hf/tokenization.py `encode` as predict, the scorer and the server make theirs (a chat goes through the
    tokenizer's chat template when it has one, else is rendered as promptAndCompletion renders it)."""
    out = []
    for n, e in _lines(file, 'examples'):
        problem = _problem(e)
        if problem:
            raise TrainerError(f'{file}:{n}: {problem}')
        weight = float(e.get('weight', 1))
        if 'messages' in e and tokenizer.chat_template:
            prompt, completion = e['messages'][:-1], e['messages'][-1]['content']
        else:
            prompt, completion = prompt_and_completion(e)
        if weight <= 0 or not completion:
            continue
        ids, mask = _encoded(tokenizer, prompt, completion, f'{file}:{n}')
        ids, mask = ids[:max_length], mask[:max_length]
        if any(mask):  # a prompt that fills max_length leaves nothing to learn
            out.append(({'input_ids': ids, 'completion_mask': mask}, weight, n))
    return out


def _pair_problem(p):
    if not isinstance(p, dict):
        return 'must be a JSON object'
    for key in ('prompt', 'chosen', 'rejected'):
        if not isinstance(p.get(key), str):
            return f'{key}: must be a string'
    w = p.get('weight', 1)
    if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
        return 'weight: must be a finite number >= 0'
    return None


def read_pair_rows(file, tokenizer):
    """[({prompt_ids, chosen_ids, rejected_ids}, draw weight, line number)] (TRL DPO's tokenized form, `encode`d as for SFT) for
    the pairs with a weight above 0 and two different answers."""
    out = []
    for n, p in _lines(file, 'pairs'):
        problem = _pair_problem(p)
        if problem:
            raise TrainerError(f'{file}:{n}: {problem}')
        weight = float(p.get('weight', 1))
        if weight > 0 and p['chosen'] != p['rejected']:
            chosen, mask = _encoded(tokenizer, p['prompt'], p['chosen'], f'{file}:{n}')
            cut = mask.index(1)
            rejected = _encoded(tokenizer, p['prompt'], p['rejected'], f'{file}:{n}')[0]
            row = {'prompt_ids': chosen[:cut], 'chosen_ids': chosen[cut:], 'rejected_ids': rejected[cut:]}
            out.append((row, weight, n))
    return out


def draws(rows, count, seed, file):
    """The indices into `rows` of `count` draws with replacement in proportion to their weights, from a generator of
    the run's seed."""
    if not rows:
        raise TrainerError(f'{file} has nothing to train on (no line with a weight above 0 and something to learn)')
    weights = np.array([r[1] for r in rows], dtype=np.float64)
    return np.random.default_rng(seed).choice(len(rows), size=count, p=weights / weights.sum())


def drawn_dataset(rows, count, seed, file):
    """`count` rows drawn as `draws` draws them, as a datasets.Dataset in training order."""
    from datasets import Dataset

    return Dataset.from_list([rows[i][0] for i in draws(rows, count, seed, file)])


def dataset_file(run_dir, dataset, key):
    """The absolute path of run.json `dataset[key]` (relative paths are taken from the run directory), or None."""
    name = dataset.get(key)
    if name is None:
        return None
    if not isinstance(name, str):
        raise TrainerError(f'{os.path.join(run_dir, RUN_JSON)}: dataset.{key} must be a string when given')
    return os.path.join(run_dir, dataset['path'], name)
