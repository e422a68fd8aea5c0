"""`predict --checkpoint FOLDER --prompts IN.jsonl --out OUT.jsonl`: greedy completions from a frozen checkpoint
folder, one `{id, completion}` line per prompt line, in order, each stopped at EOS and cut to the prompt's `maxBytes`
UTF-8 bytes. Generation is batched with one token budget for the whole file (its largest maxBytes: every token
decodes to at least one byte), through vLLM when it is importable and a GPU is present, else transformers'
`generate`, each prompt tokenized as training tokenized it (formats/hf/tokenization.py). The folder is checked and
loaded as Flywheel loads one (formats/hf/frozen_model.py: safetensors only, no code, trust_remote_code never); the
output appears whole (written, then renamed)."""
import json
import os

from checkpoint import write_atomic
from frozen_model import FrozenCheckpointError, check_frozen_folder, load_frozen
from prompts import read_prompts
from run_config import TrainerError
from tokenization import TokenizationError, encode

BATCH = 16


def predict(folder, prompts_file, out_file):
    try:
        check_frozen_folder(folder)
    except FrozenCheckpointError as e:
        raise TrainerError(f'checkpoint {e}') from None
    os.environ['HF_HUB_OFFLINE'] = '1'  # a frozen folder is all predict loads
    prompts = read_prompts(prompts_file)  # every line checked before any is answered: a bad file writes nothing
    budget = max((m for _, _, m in prompts), default=0)
    import torch

    if os.environ.get('FLYWHEEL_TORCH_THREADS'):
        torch.set_num_threads(int(os.environ['FLYWHEEL_TORCH_THREADS']))
    if budget == 0:
        texts = [''] * len(prompts)
    elif torch.cuda.is_available() and _vllm_importable():
        texts = _vllm_complete(folder, [p for _, p, _ in prompts], budget)
    else:
        texts = _generate_complete(folder, [p for _, p, _ in prompts], budget)
    out = [json.dumps({'id': pid, 'completion': cut(text, m)}) + '\n' for (pid, _, m), text in zip(prompts, texts)]
    write_atomic(out_file, ''.join(out).encode())


def cut(text, max_bytes):
    """At most max_bytes UTF-8 bytes of text; a character cut short is dropped."""
    return text.encode('utf-8')[:max_bytes].decode('utf-8', errors='ignore')


def prompt_token_ids(tokenizer, prompts):
    """Each prompt's ids as training made them (formats/hf/tokenization.py `encode`: chat template, BOS once)."""
    try:
        return [encode(tokenizer, p)[0] for p in prompts]
    except TokenizationError as e:
        raise TrainerError(f'cannot tokenize a prompt: {e}') from None


def _vllm_importable():
    try:
        import vllm  # noqa: F401
    except Exception:  # not installed, or built for another CUDA: generate() answers instead
        return False
    return True


def _generate_complete(folder, prompts, budget):
    import torch

    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    dtype = torch.bfloat16 if device == 'cuda' and torch.cuda.is_bf16_supported() else None
    try:
        model, tokenizer = load_frozen(folder, device, dtype)
    except Exception as e:
        raise TrainerError(f'cannot load the checkpoint {folder}: {type(e).__name__}: {" ".join(str(e).split())[:300]}') from None
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    eos = tokenizer.eos_token_id
    ids = prompt_token_ids(tokenizer, prompts)
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))  # similar lengths together: less padding
    texts = [''] * len(ids)
    for start in range(0, len(order), BATCH):
        batch = order[start:start + BATCH]
        width = max(len(ids[i]) for i in batch)
        # Left padding, so every row's next token follows its own prompt.
        input_ids = torch.tensor([[pad] * (width - len(ids[i])) + ids[i] for i in batch], device=device)
        mask = torch.tensor([[0] * (width - len(ids[i])) + [1] * len(ids[i]) for i in batch], device=device)
        with torch.no_grad():
            out = model.generate(input_ids=input_ids, attention_mask=mask, max_new_tokens=budget, do_sample=False,
                                 num_beams=1, eos_token_id=eos, pad_token_id=pad)
        for row, i in enumerate(batch):
            new = out[row, width:].tolist()
            if eos in new:
                new = new[:new.index(eos)]
            texts[i] = tokenizer.decode(new, skip_special_tokens=True)
    return texts


def _vllm_complete(folder, prompts, budget):
    from transformers import AutoTokenizer
    from vllm import LLM, SamplingParams

    tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=False, local_files_only=True)
    llm = LLM(model=folder, tokenizer=folder, trust_remote_code=False, seed=0)
    params = SamplingParams(temperature=0.0, max_tokens=budget, skip_special_tokens=True)
    outputs = llm.generate([{'prompt_token_ids': ids} for ids in prompt_token_ids(tokenizer, prompts)], params)
    return [o.outputs[0].text for o in outputs]
