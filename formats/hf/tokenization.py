"""The one tokenization of a Hugging Face model's inputs, used by training (trainers/hf/training_data.py: SFT rows
and DPO pairs), predict (trainers/hf/predict.py), the loss scorer (score_loss.py) and the completion server
(serve.py) alike, so a model is scored and served on exactly the tokens it was trained on. It lives in formats/hf,
the one folder all four can import: the trainer puts it on sys.path (trainers/hf/main.py, core/trainer-program.ts
HF_TRAINER_CODE_PATHS), the scorer's sandbox and the server run from it. No torch here.

The rules, from the tokenizer alone (a frozen folder carries its tokenizer, so a scorer that knows nothing of the
run's settings still follows them):
- A tokenizer with a chat template renders every prompt through it, with the generation prompt: a chat's messages
  but the last as they are, a plain prompt string as one user message. One without renders the prompt as given.
- BOS at most once: the rendered prompt is tokenized without special tokens (a template's own BOS text becomes the
  BOS token there), then BOS is put first when the tokenizer adds one of its own and the text did not start with it.
  No EOS after a prompt.
- The completion is tokenized apart from the prompt, without special tokens (so a byte-level BPE never merges a
  prompt's trailing space into the completion's first token, and the completion's tokens decode to exactly it), then
  EOS when asked: training teaches the model to stop there; the scorer scores the completion's own tokens only.
- An empty prompt becomes one start token (BOS, else EOS, else pad): the first completion token needs a context."""


class TokenizationError(Exception):
    """An input the tokenizer cannot make ids of; the message is one line."""


def adds_bos(tokenizer):
    """Whether the tokenizer puts BOS first of its own (its post-processor) when asked for special tokens."""
    bos = tokenizer.bos_token_id
    if bos is None:
        return False
    cached = getattr(tokenizer, '_flywheel_adds_bos', None)
    if cached is None:
        plain = tokenizer('a', add_special_tokens=False)['input_ids']
        special = tokenizer('a')['input_ids']
        cached = len(special) > len(plain) and special[0] == bos
        tokenizer._flywheel_adds_bos = cached
    return cached


def prompt_text(tokenizer, prompt):
    """The prompt as the model reads it: `prompt` is a string or a list of {role, content} messages (a chat's turns
    before the answer), rendered through the tokenizer's chat template when it has one."""
    if tokenizer.chat_template:
        messages = [{'role': 'user', 'content': prompt}] if isinstance(prompt, str) else prompt
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    if not isinstance(prompt, str):
        raise TokenizationError('a chat prompt needs a tokenizer with a chat template (render it as text first)')
    return prompt


def _start_token(tokenizer):
    for t in (tokenizer.bos_token_id, tokenizer.eos_token_id, tokenizer.pad_token_id):
        if t is not None:
            return t
    raise TokenizationError('an empty prompt, and the tokenizer has no BOS, EOS or pad token to start from')


def prompt_ids(tokenizer, prompt):
    ids = tokenizer(prompt_text(tokenizer, prompt), add_special_tokens=False)['input_ids']
    bos = tokenizer.bos_token_id
    if adds_bos(tokenizer) and ids[:1] != [bos]:
        ids = [bos] + ids
    return ids or [_start_token(tokenizer)]


def completion_ids(tokenizer, completion, eos):
    ids = tokenizer(completion, add_special_tokens=False)['input_ids']
    if eos:
        if tokenizer.eos_token_id is None:
            raise TokenizationError('the tokenizer has no EOS token to end a completion with')
        ids = ids + [tokenizer.eos_token_id]
    return ids


def encode(tokenizer, prompt, completion=None, eos=True):
    """(input ids, completion mask): the prompt's ids (mask 0) then, when a completion is given, its ids and EOS if
    `eos` (mask 1). Predict and serve pass the prompt alone; training passes the completion with EOS; the scorer
    passes the reference without."""
    p = prompt_ids(tokenizer, prompt)
    c = completion_ids(tokenizer, completion, eos) if completion is not None else []
    return p + c, [0] * len(p) + [1] * len(c)
