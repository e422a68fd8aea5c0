"""The training-job contract's command line, shared by the PyTorch and Hugging Face trainers: `train --run-dir DIR`,
`predict --checkpoint X --prompts IN.jsonl --out OUT.jsonl`, `predict --serve` and the PyTorch trainer's `train
--serve` (serve_predict.py), or `describe` (the
knobs, as one JSON line). Anything else is a TrainerError naming the usage."""
import argparse
import json

from run_config import TrainerError


def parse_entry(argv, checkpoint='FILE', serve_train=False):
    """('train', args), ('predict', args), ('serve', args) or, where `serve_train`, ('serve-train', args) for `train
    --serve`; `checkpoint` is how the usage line names predict's checkpoint."""
    usage = (f'usage: main.py train --run-dir DIR{" | train --serve" if serve_train else ""} | predict --checkpoint '
             f'{checkpoint} --prompts IN.jsonl --out OUT.jsonl | predict --serve | describe')
    if argv == ['describe']:
        return 'describe', None

    class Parser(argparse.ArgumentParser):
        def error(self, message):
            raise TrainerError(f'{message} ({usage})')

    parser = Parser(prog='main.py', add_help=False)
    parser.add_argument('command', choices=['train', 'predict'])
    for flag in ('--run-dir', '--checkpoint', '--prompts', '--out'):
        parser.add_argument(flag)
    parser.add_argument('--serve', action='store_true')
    a = parser.parse_args(argv)
    if a.command == 'train' and a.run_dir and not (a.checkpoint or a.prompts or a.out or a.serve):
        return 'train', a
    if serve_train and a.command == 'train' and a.serve and not (a.checkpoint or a.prompts or a.out or a.run_dir):
        return 'serve-train', a
    if a.command == 'predict' and a.serve and not (a.checkpoint or a.prompts or a.out or a.run_dir):
        return 'serve', a
    if a.command == 'predict' and a.checkpoint and a.prompts and a.out and not a.run_dir:
        return 'predict', a
    raise TrainerError(usage)


def describe(knobs):
    """The `describe` entry point (core/job-contract.ts TrainerDescription): every knob with its default and meaning."""
    print(json.dumps({'knobs': {name: {'default': default, 'meaning': meaning}
                                for name, (default, _check, meaning) in knobs.items()}}, default=str))
