"""The peer the HF trainer's throughput is measured against: a bare TRL script, no Flywheel code, training the same
model on the same examples with the same SFT config (completion-only loss, same lr schedule, batch, length, steps,
precision), the way a researcher would write it. Prints one JSON line per logging window, `{step, tokens,
tokens_per_s}` (non-padding tokens, timed between logs as the HF trainer times them), then `{"params": N}`.
    python3 hf-bare-trl.py --model DIR --examples train.jsonl --steps N --batch N --max-length N --lr X
        [--log-every N] [--seed N] [--bf16] [--threads N]"""
import argparse
import json
import os
import sys
import time

for key, value in (('HF_HUB_OFFLINE', '1'), ('HF_DATASETS_DISABLE_PROGRESS_BARS', '1'), ('TRANSFORMERS_VERBOSITY', 'error'),
                   ('TOKENIZERS_PARALLELISM', 'false')):
    os.environ.setdefault(key, value)


def main(argv):
    a = argparse.ArgumentParser()
    for flag, kind in (('--model', str), ('--examples', str), ('--steps', int), ('--batch', int), ('--max-length', int),
                       ('--lr', float), ('--log-every', int), ('--seed', int), ('--threads', int)):
        a.add_argument(flag, type=kind)
    a.add_argument('--bf16', action='store_true')
    a.add_argument('--out', default='/tmp/hf-bare-trl-out')
    o = a.parse_args(argv)
    import numpy as np
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, PrinterCallback, TrainerCallback
    from trl import SFTConfig, SFTTrainer

    if o.threads:
        torch.set_num_threads(o.threads)
    rows = [json.loads(l) for l in open(o.examples, encoding='utf-8') if l.strip()]
    picks = np.random.default_rng(o.seed or 0).choice(len(rows), size=o.steps * o.batch)
    dataset = Dataset.from_list([{'prompt': rows[i]['prompt'], 'completion': rows[i]['completion']} for i in picks])
    tokenizer = AutoTokenizer.from_pretrained(o.model)
    model = AutoModelForCausalLM.from_pretrained(o.model)

    class Windows(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            self.last = (time.perf_counter(), state.num_input_tokens_seen)

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and 'loss' in logs:
                now, tokens = time.perf_counter(), state.num_input_tokens_seen
                print(json.dumps({'step': state.global_step, 'tokens': tokens, 'tokens_per_s': (tokens - self.last[1]) / (now - self.last[0])}), flush=True)
                self.last = (now, tokens)

    config = SFTConfig(output_dir=o.out, learning_rate=o.lr, lr_scheduler_type='cosine', max_steps=o.steps,
                       per_device_train_batch_size=o.batch, max_length=o.max_length, logging_steps=o.log_every or 10,
                       bf16=o.bf16, activation_checkpointing=False, completion_only_loss=True, save_strategy='no',
                       report_to='none', disable_tqdm=True, seed=o.seed or 0, include_num_input_tokens_seen='non_padding',
                       dataloader_num_workers=0)
    trainer = SFTTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer, callbacks=[Windows()])
    trainer.remove_callback(PrinterCallback)
    trainer.train()
    trainer.save_model(o.out)
    print(json.dumps({'tokens': int(trainer.state.num_input_tokens_seen), 'params': model.num_parameters()}), flush=True)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
