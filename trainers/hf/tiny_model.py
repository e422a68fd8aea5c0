"""Builds a tiny causal LM of the Llama architecture from a config, with a byte-level BPE tokenizer trained on the
given text, and saves both as a folder that `from_pretrained` loads like any hub model (safetensors). For tests,
benches and machines with no hub: `python3 tiny_model.py --out DIR --text FILE [--vocab-size N] [--layers N]
[--hidden N] [--heads N] [--seed N]`. The weights are random (seeded): training is what makes them good."""
import argparse
import os
import sys

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('HF_HUB_DISABLE_PROGRESS_BARS', '1')
os.environ.setdefault('TRANSFORMERS_VERBOSITY', 'error')

SPECIAL = {'bos_token': '<s>', 'eos_token': '</s>', 'pad_token': '<pad>', 'unk_token': '<unk>'}


def build_tokenizer(text_file, vocab_size):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL.values()),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train([text_file], trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, clean_up_tokenization_spaces=False, **SPECIAL)


def build_model(tokenizer, layers, hidden, heads, seed, max_positions, intermediate=None):
    """A Llama of this shape, seeded, with the tokenizer's special tokens (pretrain_base.py builds flywheel-base with
    it too); `intermediate` is 4 x hidden unless given."""
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=intermediate or hidden * 4,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=max_positions,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    model = LlamaForCausalLM(config)
    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id
    )
    return model


def readable_by_all(folder):
    """A base model is read by trainers that run as uids of their own (Flywheel's sandbox): safetensors writes its
    file owner-only, so every file becomes o+r and every folder o+rx."""
    for root, dirs, files in os.walk(folder):
        os.chmod(root, os.stat(root).st_mode | 0o555)
        for f in files:
            full = os.path.join(root, f)
            os.chmod(full, os.stat(full).st_mode | 0o444)


def main(argv):
    p = argparse.ArgumentParser(prog='tiny_model.py', description=__doc__.split('\n')[0])
    p.add_argument('--out', required=True)
    p.add_argument('--text', required=True, help='a UTF-8 text file to train the tokenizer on')
    p.add_argument('--vocab-size', type=int, default=384)
    p.add_argument('--layers', type=int, default=2)
    p.add_argument('--hidden', type=int, default=64)
    p.add_argument('--heads', type=int, default=4)
    p.add_argument('--max-positions', type=int, default=512)
    p.add_argument('--seed', type=int, default=0)
    a = p.parse_args(argv)
    if not os.path.isfile(a.text):
        print(f'tiny_model.py: --text {a.text}: no such file', file=sys.stderr)
        return 2
    tokenizer = build_tokenizer(a.text, a.vocab_size)
    model = build_model(tokenizer, a.layers, a.hidden, a.heads, a.seed, a.max_positions)
    os.makedirs(a.out, exist_ok=True)
    model.save_pretrained(a.out, safe_serialization=True)
    tokenizer.save_pretrained(a.out)
    readable_by_all(a.out)
    n = sum(p.numel() for p in model.parameters())
    print(f'tiny_model.py: {a.out}: LlamaForCausalLM, {n} parameters, vocabulary {len(tokenizer)}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
