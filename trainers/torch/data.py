"""The training data and the windows each step trains on: a dataset version's examples (train.jsonl, loss on the
completions only) when run.json names them, else its training text (train.txt, every byte a target). Sampling
draws from a generator of its own, seeded per process, whose state goes into every checkpoint, so a resumed run
sees the same windows."""
import os

import torch

from examples import read_examples
from model import BOS, IGNORE
from run_config import TrainerError

# A share of text windows start with BOS and then the text from a random offset, so the model also learns to
# continue a text from its first bytes, as predict asks it to (BOS + prompt).
BOS_RATE = 1 / 8


def load_training_windows(run_dir, dataset, context):
    # Relative paths are taken from the run directory, so the trainer's cwd does not matter.
    if dataset.get('examplesFile'):
        return ExampleWindows(os.path.join(run_dir, dataset['path'], dataset['examplesFile']))
    return TextWindows(load_train_bytes(run_dir, dataset, context))


def load_train_bytes(run_dir, dataset, context):
    file = os.path.join(run_dir, dataset['path'], dataset['trainFile'])
    try:
        with open(file, 'rb') as f:
            data = f.read()
    except OSError as e:
        raise TrainerError(f'cannot read the training text {file}: {e.strerror or e}') from None
    if len(data) < context + 1:
        raise TrainerError(f'the training text {file} has {len(data)} bytes; context {context} needs at least {context + 1}')
    return torch.frombuffer(bytearray(data), dtype=torch.uint8)


def data_generator(seed, rank):
    return torch.Generator().manual_seed(seed * 1_000_003 + rank)


class TextWindows:
    def __init__(self, data):
        self.data = data

    def sample(self, batch_size, context, gen):
        return sample_batch(self.data, batch_size, context, gen)


def sample_batch(data, batch_size, context, gen):
    """(inputs, targets), each (batch_size, context) int64: a window of the text at a uniform offset, and for
    BOS_RATE of the rows BOS followed by the window's first context-1 bytes."""
    offsets = torch.randint(0, data.numel() - context, (batch_size,), generator=gen)
    w = data[offsets[:, None] + torch.arange(context + 1)].long()
    bos_rows = (torch.rand(batch_size, generator=gen) < BOS_RATE)[:, None]
    x_bos = torch.cat([torch.full((batch_size, 1), BOS), w[:, : context - 1]], dim=1)
    x = torch.where(bos_rows, x_bos, w[:, :context])
    y = torch.where(bos_rows, w[:, :context], w[:, 1:])
    return x, y


class ExampleWindows:
    """Each example is the sequence BOS + prompt + completion + BOS: the trailing BOS is the end of the completion,
    which the model learns to predict so that greedy decoding (which stops at BOS) answers with the completion
    alone. Only the completion's bytes and that end are targets; prompt positions are IGNORE."""

    def __init__(self, file):
        examples = read_examples(file)
        # Drawable: weight above 0 and a completion to learn; the others stay out of training.
        kept = [(p, c, w) for p, c, w in examples if w > 0 and c]
        if not kept:
            what = 'has no examples' if not examples else f'has {len(examples)} examples, none with both a weight above 0 and a completion'
            raise TrainerError(f'{file} {what}')
        self.data = torch.frombuffer(bytearray(b''.join(p + c for p, c, _ in kept)), dtype=torch.uint8)
        lengths = torch.tensor([len(p) + len(c) for p, c, _ in kept], dtype=torch.long)
        self.offset = torch.cumsum(lengths, 0) - lengths
        self.length = lengths
        self.prompt = torch.tensor([len(p) for p, _, _ in kept], dtype=torch.long)
        # Drawn in proportion to weight alone (as the built-in trainer draws): with the loss averaged per window
        # (model.py), an example's share of the loss is its weight's share, whatever its length.
        self.cum_weight = torch.cumsum(torch.tensor([w for _, _, w in kept], dtype=torch.float64), 0)

    def draw(self, batch_size, gen):
        """The indices (among the drawable examples) of batch_size examples drawn in proportion to their weights."""
        u = torch.rand(batch_size, generator=gen, dtype=torch.float64) * self.cum_weight[-1]
        return torch.searchsorted(self.cum_weight, u, right=True).clamp(max=self.cum_weight.numel() - 1)

    def sample(self, batch_size, context, gen):
        """(inputs, targets), each (batch_size, context) int64. An example is drawn in proportion to its weight and a
        target uniformly among its completion bytes and its end; the window is the `context` sequence positions
        from max(0, target - context), so it starts at BOS whenever the example fits, as predict sees a prompt.
        Every completion target inside the window counts; positions past the example's end are padding."""
        ex = self.draw(batch_size, gen)
        length, prompt, offset = self.length[ex], self.prompt[ex], self.offset[ex]
        completion_targets = length - prompt + 1  # completion bytes and the end
        first = 1 + prompt  # sequence index of the first completion byte (index 0 is the leading BOS)
        target = first + (torch.rand(batch_size, generator=gen, dtype=torch.float64) * completion_targets).long()
        start = (target - context).clamp(min=0)
        k = start[:, None] + torch.arange(context + 1)  # sequence indices of the window
        inside = (k >= 1) & (k <= length[:, None])
        byte = (offset[:, None] + k - 1).clamp(0, self.data.numel() - 1)
        tokens = torch.where(inside, self.data[byte].long(), torch.full_like(k, BOS))
        tk = k[:, 1:]
        counted = (tk >= first[:, None]) & (tk <= length[:, None] + 1)
        return tokens[:, :context], torch.where(counted, tokens[:, 1:], torch.full_like(tk, IGNORE))
