"""Flywheel's own held-out loss for a frozen Hugging Face checkpoint (format hf-causal-lm-v1): the bits each loss
item's reference costs after its prompt, run by the eval worker with the hf-venv's interpreter on a folder loaded
through frozen_model.load_frozen (safetensors only, no remote code). The trainee's code never runs here.

    python3 score_loss.py --checkpoint DIR --items IN.jsonl --out OUT.jsonl [--device auto|cpu|cuda] [--batch N]
                         [--dtype float32|bfloat16|float16]

IN.jsonl: one {id, prompt, reference} a line. OUT.jsonl: one {id, bits, bytes, dtype} a line, in the same order, where
bits = -log2 p(reference | prompt) summed over the reference's tokens and bytes = the reference's UTF-8 bytes.

Tokens: the prompt and the reference are tokenized exactly as training tokenized a prompt and its completion
(tokenization.py `encode`: the tokenizer's chat template when it has one, BOS once when the tokenizer adds one,
the reference tokenized apart without special tokens). So no token ever spans the join, the scored tokens decode
to exactly the reference, and the figure does not depend on how a merge across the boundary would have fallen. No
EOS is scored after the reference. A prompt too long for the model's context loses tokens from its start; a
reference that does not fit with at least one token before it is an error.

Dtype: the model is loaded in --dtype (float32 unless told; on the CPU and a GPU alike), the log-softmax taken in
float32, so scores made on different machines compare. Each output line carries the dtype it was scored in.
Exit 2 with one line on stderr for bad input; nothing is written to OUT unless every item was scored."""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frozen_model import FrozenCheckpointError, load_frozen  # noqa: E402
from tokenization import TokenizationError, encode  # noqa: E402

DTYPES = ('float32', 'bfloat16', 'float16')


class BadItemsError(Exception):
    """An items file Flywheel cannot score; the message is one line naming the file and line."""


def read_items(file):
    items = []
    with open(file, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError:
                raise BadItemsError(f'{file}:{n}: not valid JSON') from None
            if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in ('id', 'prompt', 'reference')):
                raise BadItemsError(f'{file}:{n}: needs string "id", "prompt" and "reference"')
            items.append(item)
    return items


def context_length(model):
    n = getattr(model.config, 'max_position_embeddings', None)
    return int(n) if isinstance(n, int) and n > 0 else 2048


def item_ids(tokenizer, item, limit):
    """(input ids, index of the first reference token) under the join rule above."""
    try:
        ids, mask = encode(tokenizer, item['prompt'], item['reference'], eos=False)
    except TokenizationError as e:
        raise BadItemsError(f'item "{item["id"]}": {e}') from None
    first = mask.index(1) if 1 in mask else len(ids)
    before, reference = ids[:first], ids[first:]
    if len(reference) + 1 > limit:
        raise BadItemsError(f'item "{item["id"]}": its reference is {len(reference)} tokens, past the model\'s context of {limit}')
    keep = limit - len(reference)
    if len(before) > keep:
        before = before[len(before) - keep :]
    return before + reference, len(before)


def score(model, tokenizer, items, device, batch):
    import torch

    limit = context_length(model)
    encoded = [item_ids(tokenizer, item, limit) for item in items]
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    bits = [0.0] * len(items)
    order = sorted(range(len(items)), key=lambda i: len(encoded[i][0]))
    with torch.no_grad():
        for start in range(0, len(order), batch):
            chunk = order[start : start + batch]
            width = max(len(encoded[i][0]) for i in chunk)
            ids = torch.full((len(chunk), width), pad, dtype=torch.long)
            mask = torch.zeros((len(chunk), width), dtype=torch.long)
            for row, i in enumerate(chunk):
                seq = encoded[i][0]
                ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
                mask[row, : len(seq)] = 1
            logits = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits.float()
            logp = torch.log_softmax(logits, dim=-1).cpu()
            for row, i in enumerate(chunk):
                seq, first = encoded[i]
                # Token t is predicted by the logits at t - 1.
                targets = torch.tensor(seq[first:], dtype=torch.long)
                picked = logp[row, first - 1 : len(seq) - 1].gather(1, targets.unsqueeze(1)).squeeze(1)
                bits[i] = float(-picked.sum()) / math.log(2)
    return bits


def main(argv):
    p = argparse.ArgumentParser(prog='score_loss.py', description=__doc__.split('\n')[0])
    p.add_argument('--checkpoint', required=True)
    p.add_argument('--items', required=True)
    p.add_argument('--out', required=True)
    p.add_argument('--device', default='auto', choices=['auto', 'cpu', 'cuda'])
    p.add_argument('--batch', type=int, default=16)
    p.add_argument('--dtype', default='float32', choices=DTYPES, help='the weights\' dtype while scoring')
    a = p.parse_args(argv)
    try:
        items = read_items(a.items)
        import torch

        device = ('cuda' if torch.cuda.is_available() else 'cpu') if a.device == 'auto' else a.device
        # One dtype wherever it runs (the checkpoint's own would differ between a CPU and a GPU scorer).
        model, tokenizer = load_frozen(a.checkpoint, device=device, dtype=getattr(torch, a.dtype))
        bits = score(model, tokenizer, items, device, max(1, a.batch))
    except (BadItemsError, FrozenCheckpointError, OSError) as e:
        print(f'score_loss: {e}', file=sys.stderr)
        return 2
    tmp = a.out + '.tmp'
    with open(tmp, 'w', encoding='utf-8') as f:
        for item, b in zip(items, bits):
            line = {'id': item['id'], 'bits': b, 'bytes': len(item['reference'].encode('utf-8')), 'dtype': a.dtype}
            f.write(json.dumps(line) + '\n')
    os.replace(tmp, a.out)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
