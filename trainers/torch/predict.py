"""`predict --checkpoint FILE --prompts IN.jsonl --out OUT.jsonl`: greedy byte completions from a frozen
checkpoint, one `{id, completion}` line per prompt line, in order. It reads only the prompts it is given,
and the output appears whole (written, then renamed)."""
import json
import os

import torch

from checkpoint import load_checkpoint, write_atomic
from model import GPT, GPTConfig, greedy_complete
from prompts import read_prompts


def predict(checkpoint_file, prompts_file, out_file):
    if os.environ.get('FLYWHEEL_TORCH_THREADS'):
        torch.set_num_threads(int(os.environ['FLYWHEEL_TORCH_THREADS']))
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    c = load_checkpoint(checkpoint_file, 'checkpoint', device)
    model = GPT(GPTConfig(**c['config'])).to(device)
    model.load_state_dict(c['model'])
    model.eval()
    prompts = read_prompts(prompts_file)  # every line checked before any is answered: a bad file writes nothing
    out = []
    for pid, prompt, max_bytes in prompts:
        completion = greedy_text(model, prompt, max_bytes, device)
        out.append(json.dumps({'id': pid, 'completion': completion}) + '\n')
    write_atomic(out_file, ''.join(out).encode())


def greedy_text(model, prompt, max_bytes, device):
    raw = greedy_complete(model, prompt.encode('utf-8'), max_bytes, device)
    # The model emits bytes; a multi-byte character cut short (or invalid UTF-8) is dropped, so the
    # completion is a string of at most max_bytes UTF-8 bytes.
    return raw.decode('utf-8', errors='ignore')
