"""`predict --checkpoint FILE --prompts IN.jsonl --out OUT.jsonl`: greedy byte completions from a frozen
checkpoint, one `{id, completion}` line per prompt line, in order. It reads only the prompts it is given,
and the output appears whole (written, then renamed)."""
import json
import os

import torch

from checkpoint import load_checkpoint, write_atomic
from model import GPT, GPTConfig, greedy_complete
from run_config import TrainerError


def parse_prompt(line, where):
    try:
        p = json.loads(line)
    except ValueError:
        raise TrainerError(f'{where}: not JSON') from None
    if not isinstance(p, dict) or not isinstance(p.get('id'), str) or not isinstance(p.get('prompt'), str):
        raise TrainerError(f'{where}: id and prompt must be strings')
    m = p.get('maxBytes')
    if isinstance(m, float) and m.is_integer():
        m = int(m)  # JSON has one number type: 16.0 is the integer 16, as for the TypeScript trainer
    if not isinstance(m, int) or isinstance(m, bool) or not 0 <= m <= 65536:
        raise TrainerError(f'{where}: maxBytes must be an integer from 0 to 65536')
    return p['id'], p['prompt'], m


def predict(checkpoint_file, prompts_file, out_file):
    if os.environ.get('FLYWHEEL_TORCH_THREADS'):
        torch.set_num_threads(int(os.environ['FLYWHEEL_TORCH_THREADS']))
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    c = load_checkpoint(checkpoint_file, 'checkpoint', device)
    model = GPT(GPTConfig(**c['config'])).to(device)
    model.load_state_dict(c['model'])
    model.eval()
    try:
        with open(prompts_file, encoding='utf-8') as f:
            lines = [(i + 1, l) for i, l in enumerate(f.read().split('\n')) if l.strip()]
    except (OSError, UnicodeDecodeError) as e:
        raise TrainerError(f'cannot read {prompts_file}: {e}') from None
    # Every line is checked before any is answered, so a bad file fails fast and writes nothing.
    prompts = [parse_prompt(l, f'{prompts_file}:{n}') for n, l in lines]
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
