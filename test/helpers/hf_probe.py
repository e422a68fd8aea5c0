"""Looks inside the HF trainer for its tests (run with the hf-venv's python3), printing one JSON value:
    hf_probe.py targets RUN_DIR        the first training batch TRL builds: each row's prompt text and the text of the
                                       tokens that are loss targets (labels != -100)
    hf_probe.py example-loss RUN_DIR   the training loss of the first batch as the trainer computes it, and computed
                                       here from plain logits as the mean of each row's mean over its targets and as the
                                       mean over all targets; and the draw weight of every example
    hf_probe.py logprobs FOLDER PAIRS  per pair of pairs.jsonl, log p(chosen | prompt) and log p(rejected | prompt)
                                       under the frozen checkpoint FOLDER, computed here with plain transformers
    hf_probe.py nll FOLDER EXAMPLES    the mean cross-entropy (nats per target token: completion tokens and EOS) of
                                       train.jsonl's examples under FOLDER
    hf_probe.py digest FOLDER          trainers/hf/manifest.py's digest of FOLDER
    hf_probe.py parameters FOLDER      the model's parameter count (num_parameters)
    hf_probe.py tensor-names FOLDER    the names of the tensors in FOLDER/model.safetensors"""
import json
import os
import sys

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
sys.path[:0] = [os.path.join(REPO, 'trainers', 'hf'), os.path.join(REPO, 'trainers', 'torch'), os.path.join(REPO, 'formats', 'hf')]
for key, value in (('HF_HUB_OFFLINE', '1'), ('HF_DATASETS_DISABLE_PROGRESS_BARS', '1'), ('TRANSFORMERS_VERBOSITY', 'error')):
    os.environ.setdefault(key, value)


def targets(run_dir):
    from train import build_trainer, plan_run

    plan = plan_run(run_dir)
    trainer = build_trainer(plan, plan.dataset())
    batch = next(iter(trainer.get_train_dataloader()))
    tok = plan.tokenizer
    rows = []
    for ids, labels, mask in zip(batch['input_ids'].tolist(), batch['labels'].tolist(), batch['attention_mask'].tolist()):
        rows.append({
            'input': tok.decode([i for i, m in zip(ids, mask) if m]),
            'targets': tok.decode([l for l in labels if l != -100]),
            'notTargets': tok.decode([i for i, l, m in zip(ids, labels, mask) if m and l == -100]),
        })
    return {'rows': rows, 'eos': tok.eos_token}


def example_loss(run_dir):
    import torch

    from train import build_trainer, plan_run

    plan = plan_run(run_dir)
    trainer = build_trainer(plan, plan.dataset())
    batch = next(iter(trainer.get_train_dataloader()))
    with torch.no_grad():
        trained = float(trainer.compute_loss(trainer.model, dict(batch)))
        logits = trainer.model(input_ids=batch['input_ids'], attention_mask=batch['attention_mask']).logits[:, :-1].float()
    labels = batch['labels'][:, 1:]
    mask = labels != -100
    nll = -logits.log_softmax(-1).gather(-1, labels.clamp(min=0)[..., None])[..., 0] * mask
    return {'trained': trained, 'perExample': float((nll.sum(1) / mask.sum(1)).mean()), 'perToken': float(nll.sum() / mask.sum()),
            'tokens': mask.sum(1).tolist(), 'drawWeights': sorted({r[1] for r in plan.rows})}


def logprobs(folder, pairs_file):
    from frozen_model import load_frozen

    model, tok = load_frozen(folder)
    out = []
    completion_logprob = _completion_logprob(model, tok)


    with open(pairs_file, encoding='utf-8') as f:
        for line in f:
            if line.strip():
                pair = json.loads(line)
                out.append({'chosen': completion_logprob(pair['prompt'], pair['chosen'])[0],
                            'rejected': completion_logprob(pair['prompt'], pair['rejected'])[0]})
    return out


def _completion_logprob(model, tok):
    import torch
    from tokenization import encode

    def completion_logprob(prompt, completion):
        """(log p(completion, then EOS | prompt), its token count), tokenized as the trainer and predict do."""
        full, mask = encode(tok, prompt, completion)
        p = full[:mask.index(1)]
        ids = torch.tensor([full])
        with torch.no_grad():
            logits = model(ids).logits[0, :-1].log_softmax(-1)
        picked = logits[torch.arange(len(full) - 1), ids[0, 1:]]
        return float(picked[len(p) - 1:].sum()), len(full) - len(p)

    return completion_logprob


def nll(folder, examples_file):
    from frozen_model import load_frozen

    model, tok = load_frozen(folder)
    logprob = _completion_logprob(model, tok)
    total, count = 0.0, 0
    with open(examples_file, encoding='utf-8') as f:
        for line in f:
            if line.strip():
                e = json.loads(line)
                lp, n = logprob(e['prompt'], e['completion'])
                total, count = total - lp, count + n
    return total / count


def digest(folder):
    from manifest import sha256_folder

    d, files = sha256_folder(folder)
    return {'sha256': d, 'files': files}


def parameters(folder):
    from frozen_model import load_frozen

    return load_frozen(folder)[0].num_parameters()


def tensor_names(folder):
    from safetensors import safe_open

    with safe_open(os.path.join(folder, 'model.safetensors'), 'pt') as f:
        return sorted(f.keys())


if __name__ == '__main__':
    command, *args = sys.argv[1:]
    print(json.dumps({'targets': targets, 'example-loss': example_loss, 'logprobs': logprobs, 'nll': nll, 'digest': digest, 'parameters': parameters,
                      'tensor-names': tensor_names}[command](*args)))
