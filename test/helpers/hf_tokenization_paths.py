"""The tokens each of the HF model's four readers makes of the same example, compared: training (training_data.py's
SFT rows and DPO pairs), predict (predict.py `_generate_complete`), the loss scorer (score_loss.py `score`) and the
completion server (serve.py `Generator`). Each reader runs its own code on a real tokenizer; only the model is a
stand-in that records the ids it is given (no weights needed to see what a model would read).

    python3 hf_tokenization_paths.py [--root REPO]     # REPO: the checkout whose trainers/hf and formats/hf are read

Tokenizers (built here from a config, no hub): `plain` (adds no BOS), `plain-bos` (its post-processor puts BOS
first, as Llama's does), `chat-bos` (that, with a chat template that writes BOS itself, as Llama 3's does) and
`chat` (a ChatML-like template, no BOS, as Qwen's). Prints one JSON line: {checked, disagreements: [...]}; exit 1
when any two readers disagree, or a sequence holds BOS twice."""
import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TEXT = '\n'.join(f'{i}+{i * 7 % 89}={i + i * 7 % 89} the café naïve answer: user assistant system' for i in range(300))
EXAMPLES = [
    ('17+25=', '42'),
    ('What is 2 plus 2? Answer: ', '4, since 2 + 2 = 4.'),
    ('café ', 'naïve ✓'),
    ('the naï', 've café'),
    ('', 'an answer to nothing'),
]
CHAT_BOS = ("{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% endif %}")
CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def build_tokenizers(root, out):
    sys.path.insert(0, os.path.join(root, 'trainers', 'hf'))
    from tiny_model import build_tokenizer
    from tokenizers import processors
    from transformers import AutoTokenizer

    text_file = os.path.join(out, 'text.txt')
    with open(text_file, 'w', encoding='utf-8') as f:
        f.write(TEXT)
    made = {}
    for name, bos_first, template in (('plain', False, None), ('plain-bos', True, None), ('chat-bos', True, CHAT_BOS),
                                      ('chat', False, CHATML)):
        tok = build_tokenizer(text_file, 400)
        if bos_first:
            tok._tokenizer.post_processor = processors.TemplateProcessing(
                single='<s> $A', pair='<s> $A <s> $B', special_tokens=[('<s>', tok.bos_token_id)])
        if template:
            tok.chat_template = template
        folder = os.path.join(out, name)
        tok.save_pretrained(folder)
        made[name] = AutoTokenizer.from_pretrained(folder)
    return made


class Recorder:
    """A causal LM stand-in: records the unpadded ids of each row it reads; generates EOS; its logits are zeros."""

    def __init__(self, tokenizer):
        import torch

        self.torch = torch
        self.eos = tokenizer.eos_token_id
        self.seen = []
        self.device = torch.device('cpu')
        self.config = type('Config', (), {'max_position_embeddings': 4096, 'vocab_size': len(tokenizer)})()
        self.generation_config = type('GenerationConfig', (), {'eos_token_id': self.eos})()

    def _record(self, input_ids, attention_mask):
        for row, mask in zip(input_ids.tolist(), attention_mask.tolist()):
            self.seen.append([t for t, m in zip(row, mask) if m])

    def generate(self, input_ids, attention_mask, **_):
        self._record(input_ids, attention_mask)
        eos = self.torch.full((input_ids.shape[0], 1), self.eos, dtype=input_ids.dtype)
        return self.torch.cat([input_ids, eos], dim=1)

    def __call__(self, input_ids, attention_mask):
        self._record(input_ids, attention_mask)
        logits = self.torch.zeros(input_ids.shape[0], input_ids.shape[1], self.config.vocab_size)
        return type('Out', (), {'logits': logits})()


def readers(root):
    sys.path[:0] = [os.path.join(root, 'trainers', 'hf'), os.path.join(root, 'trainers', 'torch'), os.path.join(root, 'formats', 'hf')]
    import predict
    import score_loss
    import serve
    import training_data
    return training_data, predict, score_loss, serve


def tokens_of(mods, tokenizer, prompt, completion, scratch):
    """{reader: (prompt ids, completion ids without EOS)} for one prompt/completion example."""
    training_data, predict, score_loss, serve = mods
    eos = tokenizer.eos_token_id
    out = {}
    sft = os.path.join(scratch, 'train.jsonl')
    with open(sft, 'w', encoding='utf-8') as f:
        f.write(json.dumps({'prompt': prompt, 'completion': completion}) + '\n')
    (row, _, _), = training_data.read_sft_rows(sft, tokenizer, 100_000)
    ids, mask = row['input_ids'], row['completion_mask']
    c = [t for t, m in zip(ids, mask) if m]
    out['train'] = ([t for t, m in zip(ids, mask) if not m], c[:-1] if c[-1:] == [eos] else c)
    pairs = os.path.join(scratch, 'pairs.jsonl')
    with open(pairs, 'w', encoding='utf-8') as f:
        f.write(json.dumps({'prompt': prompt, 'chosen': completion, 'rejected': completion + ' no'}) + '\n')
    (pair, _, _), = training_data.read_pair_rows(pairs, tokenizer)
    chosen = pair['chosen_ids']
    out['train-dpo'] = (pair['prompt_ids'], chosen[:-1] if chosen[-1:] == [eos] else chosen)

    model = Recorder(tokenizer)
    predict.load_frozen = lambda *_a, **_k: (model, tokenizer)
    predict._generate_complete('stand-in', [prompt], 1)
    out['predict'] = (model.seen[-1], None)

    model = Recorder(tokenizer)
    serve.Generator(model, tokenizer, 1).answer(prompt, 1)
    out['serve'] = (model.seen[-1], None)

    model = Recorder(tokenizer)
    score_loss.score(model, tokenizer, [{'id': 'x', 'prompt': prompt, 'reference': completion}], 'cpu', 1)
    ids, first = score_loss.item_ids(tokenizer, {'id': 'x', 'prompt': prompt, 'reference': completion}, 4096)
    assert model.seen[-1] == ids, 'score_loss.item_ids is not what score reads'
    out['score'] = (ids[:first], ids[first:])
    return out


def chat_rows(mods, tokenizer, messages, scratch):
    sft = os.path.join(scratch, 'chat.jsonl')
    with open(sft, 'w', encoding='utf-8') as f:
        f.write(json.dumps({'messages': messages}) + '\n')
    (row, _, _), = mods[0].read_sft_rows(sft, tokenizer, 100_000)
    return row['input_ids']


def main(argv):
    a = argparse.ArgumentParser()
    a.add_argument('--root', default=os.path.dirname(os.path.dirname(HERE)))
    root = a.parse_args(argv).root
    os.environ['HF_HUB_OFFLINE'] = '1'
    problems, checked = [], 0
    with tempfile.TemporaryDirectory() as scratch:
        tokenizers = build_tokenizers(os.path.dirname(os.path.dirname(HERE)), scratch)
        mods = readers(root)
        for name, tok in tokenizers.items():
            bos = tok.bos_token_id
            for prompt, completion in EXAMPLES:
                seen = tokens_of(mods, tok, prompt, completion, scratch)
                checked += 1
                where = f'{name} {json.dumps(prompt)}'
                ref_prompt = seen['train'][0]
                for reader, (p, c) in seen.items():
                    if p != ref_prompt:
                        problems.append(f'{where}: {reader} reads the prompt as {p}, training as {ref_prompt}')
                    if c is not None and c != seen['train'][1]:
                        problems.append(f'{where}: {reader} reads the completion as {c}, training as {seen["train"][1]}')
                    if p[:2] == [bos, bos]:
                        problems.append(f'{where}: {reader} starts with BOS twice: {p[:4]}')
                # A chat of one user turn and the answer is the prompt/completion example it spells.
                if prompt and tok.chat_template:
                    ids = chat_rows(mods, tok, [{'role': 'user', 'content': prompt}, {'role': 'assistant', 'content': completion}], scratch)
                    if ids[:len(ref_prompt)] != ref_prompt:
                        problems.append(f'{where}: the chat example reads {ids[:len(ref_prompt)]}, the prompt example {ref_prompt}')
            if tok.chat_template:
                ids = chat_rows(mods, tok, [{'role': 'system', 'content': 'be brief'}, {'role': 'user', 'content': '2+2='},
                                            {'role': 'assistant', 'content': '4'}], scratch)
                checked += 1
                if ids.count(bos) > 1:
                    problems.append(f'{name} a system+user chat: training reads BOS {ids.count(bos)} times: {ids[:4]}')
    print(json.dumps({'checked': checked, 'disagreements': problems}))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
