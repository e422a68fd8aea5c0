"""The training bytes and the windows each step trains on. Sampling draws from a generator of its own,
seeded per process, whose state goes into every checkpoint, so a resumed run sees the same windows."""
import os

import torch

from model import BOS
from run_config import TrainerError

# A share of windows start with BOS and then the text from a random offset, so the model also learns to
# continue a text from its first bytes, as predict asks it to (BOS + prompt).
BOS_RATE = 1 / 8


def load_train_bytes(run_dir, dataset, context):
    # Relative paths are taken from the run directory, so the trainer's cwd does not matter.
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
