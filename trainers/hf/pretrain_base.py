"""Builds Flywheel's base model, `flywheel-base`: a small Llama-architecture causal LM pretrained here, on a corpus
every machine with the hf-venv has (the Python standard library's own source and docstrings, of the interpreter
that runs this script; PSF licence), with a byte-level BPE tokenizer trained on the same corpus that splits digits
one a token (so sums fine-tune digit by digit). Deterministic from its seed: files in sorted order, seeded weights and
batches, one thread, deterministic ops. Saved with save_pretrained (safetensors) beside a PROVENANCE.json.

Cached: the folder is `<models>/flywheel-base-<key>`, the key a hash of this script, the settings and the corpus;
built once, then found. `<models>/flywheel-base.json` names the current folder (what `model: flywheel-base` resolves
to). Prints one JSON line: {folder, cached, params, seconds, heldoutLoss, ...}.

  python3 pretrain_base.py --models DIR [--seed N] [--steps N]"""
import argparse
import hashlib
import json
import math
import os
import shutil
import sys
import sysconfig
import time

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('HF_HUB_DISABLE_PROGRESS_BARS', '1')
os.environ.setdefault('TRANSFORMERS_VERBOSITY', 'error')
os.environ.setdefault('TOKENIZERS_PARALLELISM', 'false')

import tiny_model  # noqa: E402 (after the environment it reads)
from tiny_model import SPECIAL, readable_by_all  # noqa: E402
from tiny_model import build_model as llama_model  # noqa: E402

NAME = 'flywheel-base'
POINTER = f'{NAME}.json'
# Folders of the standard library that are not its own code and docs (tests, demos, bundled wheels).
SKIP_DIRS = {'site-packages', 'dist-packages', '__pycache__', 'test', 'tests', 'idle_test', 'turtledemo', 'ensurepip', 'lib2to3'}
# Everything that makes the model: a change to any of it is a new folder.
SETTINGS = {
    'corpusBytes': 6_000_000,
    'heldoutEvery': 20,
    'vocabSize': 2048,
    'layers': 4,
    'hidden': 192,
    'intermediate': 512,
    'heads': 4,
    'seqLength': 64,
    'batchSize': 16,
    'lr': 3e-3,
    'warmup': 50,
    'heldoutWindows': 64,
}


def corpus_files(stdlib):
    """The standard library's .py files under `stdlib`, sorted by path relative to it."""
    out = []
    for root, dirs, files in os.walk(stdlib):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        out.extend(os.path.relpath(os.path.join(root, f), stdlib) for f in files if f.endswith('.py'))
    return sorted(out)


def read_corpus(stdlib, cap):
    """(train text, held-out text, sha256, files): files in sorted order until `cap` bytes; every Nth is held out."""
    h = hashlib.sha256()
    train, heldout, used, size = [], [], 0, 0
    for i, rel in enumerate(corpus_files(stdlib)):
        with open(os.path.join(stdlib, rel), 'rb') as f:
            data = f.read()
        try:
            text = data.decode('utf-8')
        except UnicodeDecodeError:
            continue
        h.update(rel.encode() + b'\0' + data + b'\0')
        (heldout if i % SETTINGS['heldoutEvery'] == 0 else train).append(text)
        used += 1
        size += len(data)
        if size >= cap:
            break
    return '\n'.join(train), '\n'.join(heldout), h.hexdigest(), used


def build_tokenizer(text, vocab_size):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    # Digits one a token before the byte-level split: "123" is 1, 2, 3 whatever the corpus's frequent numbers.
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL.values()),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(text.split('\n\n'), trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, clean_up_tokenization_spaces=False, **SPECIAL)


def build_model(tokenizer, seed):
    s = SETTINGS
    return llama_model(tokenizer, s['layers'], s['hidden'], s['heads'], seed, 512, s['intermediate'])


def heldout_loss(model, windows):
    """Mean next-token loss (nats per token) over the fixed held-out windows."""
    import torch

    model.eval()
    with torch.no_grad():
        losses = [model(input_ids=w.unsqueeze(0), labels=w.unsqueeze(0)).loss.item() for w in windows]
    model.train()
    return sum(losses) / len(losses)


def pretrain(model, train_ids, heldout_ids, steps, seed, log):
    import torch

    s = SETTINGS
    L = s['seqLength']
    g = torch.Generator().manual_seed(seed)
    # Windows spread evenly over the held-out files, not the first few of them.
    stride = max(L, (len(heldout_ids) - L) // s['heldoutWindows'])
    held = [heldout_ids[i : i + L] for i in range(0, len(heldout_ids) - L, stride)][: s['heldoutWindows']]
    opt = torch.optim.AdamW(model.parameters(), lr=s['lr'], betas=(0.9, 0.95), weight_decay=0.1)

    def lr_at(step):
        if step < s['warmup']:
            return s['lr'] * (step + 1) / s['warmup']
        return s['lr'] * 0.5 * (1 + math.cos(math.pi * (step - s['warmup']) / max(1, steps - s['warmup'])))

    model.train()
    t0 = time.monotonic()
    for step in range(steps):
        starts = torch.randint(0, len(train_ids) - L - 1, (s['batchSize'],), generator=g)
        batch = torch.stack([train_ids[i : i + L] for i in starts.tolist()])
        for group in opt.param_groups:
            group['lr'] = lr_at(step)
        loss = model(input_ids=batch, labels=batch).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if log and (step % 100 == 0 or step == steps - 1):
            print(f'pretrain_base.py: step {step + 1}/{steps} loss {loss.item():.3f} ({time.monotonic() - t0:.0f} s)', file=sys.stderr, flush=True)
    return heldout_loss(model, held)


def key_of(seed, steps, threads, corpus_sha):
    script = b''
    for source in (__file__, tiny_model.__file__):  # tiny_model builds the architecture: a change there is a new model
        with open(source, 'rb') as f:
            script += f.read()
    h = hashlib.sha256(script + json.dumps({'seed': seed, 'steps': steps, 'threads': threads, 'corpus': corpus_sha}, sort_keys=True).encode())
    return h.hexdigest()[:12]


def write_pointer(models, folder):
    tmp = os.path.join(models, f'.{POINTER}.tmp')
    with open(tmp, 'w', encoding='utf-8') as f:
        json.dump({'name': NAME, 'folder': folder}, f)
        f.write('\n')
    os.chmod(tmp, 0o644)
    os.replace(tmp, os.path.join(models, POINTER))


def main(argv):
    p = argparse.ArgumentParser(prog='pretrain_base.py', description=__doc__.split('\n')[0])
    p.add_argument('--models', required=True, help='the folder the base model is cached in (FLYWHEEL_HOME/models)')
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--steps', type=int, default=400)
    p.add_argument('--threads', type=int, default=1, help='torch threads (1: the same weights on any machine)')
    p.add_argument('--quiet', action='store_true')
    a = p.parse_args(argv)
    if a.steps < 1:
        print(f'pretrain_base.py: --steps {a.steps}: must be at least 1', file=sys.stderr)
        return 2
    stdlib = sysconfig.get_path('stdlib')
    train_text, heldout_text, corpus_sha, files = read_corpus(stdlib, SETTINGS['corpusBytes'])
    key = key_of(a.seed, a.steps, a.threads, corpus_sha)
    models = os.path.abspath(a.models)
    folder = os.path.join(models, f'{NAME}-{key}')
    provenance_file = os.path.join(folder, 'PROVENANCE.json')
    if os.path.isfile(provenance_file):
        with open(provenance_file, encoding='utf-8') as f:
            prov = json.load(f)
        write_pointer(models, folder)
        print(json.dumps({'folder': folder, 'cached': True, **prov}))
        return 0

    import torch

    torch.set_num_threads(a.threads)
    torch.use_deterministic_algorithms(True)
    t0 = time.monotonic()
    tokenizer = build_tokenizer(train_text, SETTINGS['vocabSize'])
    train_ids = torch.tensor(tokenizer(train_text, add_special_tokens=False)['input_ids'], dtype=torch.long)
    heldout_ids = torch.tensor(tokenizer(heldout_text, add_special_tokens=False)['input_ids'], dtype=torch.long)
    if not a.quiet:
        print(f'pretrain_base.py: {files} files, {len(train_ids)} training tokens ({time.monotonic() - t0:.0f} s)', file=sys.stderr)
    model = build_model(tokenizer, a.seed)
    loss = pretrain(model, train_ids, heldout_ids, a.steps, a.seed, not a.quiet)
    seconds = time.monotonic() - t0
    prov = {
        'name': NAME,
        'architecture': 'LlamaForCausalLM',
        'params': sum(t.numel() for t in model.parameters()),
        'vocabulary': len(tokenizer),
        'corpus': {
            'what': f'the Python {sys.version.split()[0]} standard library\'s .py files (source and docstrings), '
            f'sorted by path, tests and bundled packages left out; every {SETTINGS["heldoutEvery"]}th file held out',
            'root': stdlib,
            'files': files,
            'sha256': corpus_sha,
            'trainTokens': len(train_ids),
            'heldoutTokens': len(heldout_ids),
            'licence': 'PSF-2.0 (Python Software Foundation License Version 2; https://docs.python.org/3/license.html)',
        },
        'seed': a.seed,
        'steps': a.steps,
        'tokensSeen': a.steps * SETTINGS['batchSize'] * SETTINGS['seqLength'],
        'settings': SETTINGS,
        'threads': a.threads,
        'torch': torch.__version__,
        'seconds': round(seconds, 1),
        'heldoutLoss': round(loss, 4),
        'heldoutLossUnit': 'nats per token, on the held-out files',
    }
    os.makedirs(models, exist_ok=True)
    tmp = os.path.join(models, f'.{NAME}-{key}.{os.getpid()}.tmp')
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    with open(os.path.join(tmp, 'PROVENANCE.json'), 'w', encoding='utf-8') as f:
        json.dump(prov, f, indent=2)
        f.write('\n')
    readable_by_all(tmp)
    os.chmod(models, os.stat(models).st_mode | 0o555)
    if os.path.isdir(folder):  # another process built it meanwhile: the same bytes, keep theirs
        shutil.rmtree(tmp)
    else:
        os.replace(tmp, folder)
    write_pointer(models, folder)
    print(json.dumps({'folder': folder, 'cached': False, **prov}))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
