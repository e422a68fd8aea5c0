"""The Hugging Face trainer (training-job contract, core/job-contract.ts; docs/backends.md "The Hugging Face trainer"):
    <hf-venv>/bin/python3 trainers/hf/main.py train --run-dir DIR          (or under torchrun / accelerate launch)
    <hf-venv>/bin/python3 trainers/hf/main.py predict --checkpoint FOLDER --prompts IN.jsonl --out OUT.jsonl
It shares the PyTorch trainer's run.json reading, example rendering, metrics writer and atomic writes
(trainers/torch/) and Flywheel's frozen-folder checks (formats/hf/frozen_model.py). An expected failure is one line
on stderr, `hf-trainer: <what and where>`, exit 1, as for trainers/torch."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# Our own modules first: trainers/torch and formats/hf are shared, and their module names do not collide with ours.
sys.path[:0] = [HERE, os.path.join(REPO, 'trainers', 'torch'), os.path.join(REPO, 'formats', 'hf')]

# Read before any HF module sets its own default: whether the caller decided about the hub.
USER_OFFLINE = os.environ.get('HF_HUB_OFFLINE')
os.environ.setdefault('HF_HUB_DISABLE_PROGRESS_BARS', '1')
os.environ.setdefault('HF_DATASETS_DISABLE_PROGRESS_BARS', '1')
os.environ.setdefault('TRANSFORMERS_VERBOSITY', 'error')
os.environ.setdefault('TRANSFORMERS_NO_ADVISORY_WARNINGS', '1')
os.environ.setdefault('TOKENIZERS_PARALLELISM', 'false')

import argparse  # noqa: E402
import warnings  # noqa: E402

from run_config import TrainerError  # noqa: E402

USAGE = 'usage: main.py train --run-dir DIR | predict --checkpoint FOLDER --prompts IN.jsonl --out OUT.jsonl'


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise TrainerError(f'{message} ({USAGE})')


def main(argv):
    parser = _Parser(prog='main.py', add_help=False)
    parser.add_argument('command', choices=['train', 'predict'])
    for flag in ('--run-dir', '--checkpoint', '--prompts', '--out'):
        parser.add_argument(flag)
    a = parser.parse_args(argv)
    warnings.filterwarnings('ignore')  # the libraries' advice goes to stderr, where a failure's one line belongs
    if a.command == 'train' and a.run_dir and not (a.checkpoint or a.prompts or a.out):
        from train import train

        return train(a.run_dir, USER_OFFLINE)
    if a.command == 'predict' and a.checkpoint and a.prompts and a.out and not a.run_dir:
        from predict import predict

        return predict(a.checkpoint, a.prompts, a.out)
    raise TrainerError(USAGE)


if __name__ == '__main__':
    try:
        main(sys.argv[1:])
    except TrainerError as e:
        if int(os.environ.get('RANK', '0')) == 0:
            print(f'hf-trainer: {e}', file=sys.stderr)
        sys.exit(1)
