"""The Hugging Face trainer (training-job contract, core/job-contract.ts; docs/backends.md "The Hugging Face trainer"):
    <hf-venv>/bin/python3 trainers/hf/main.py train --run-dir DIR          (or under torchrun / accelerate launch)
    <hf-venv>/bin/python3 trainers/hf/main.py predict --checkpoint FOLDER --prompts IN.jsonl --out OUT.jsonl
    <hf-venv>/bin/python3 trainers/hf/main.py predict --serve     (the warm protocol: trainers/torch/serve_predict.py)
    <hf-venv>/bin/python3 trainers/hf/main.py describe            (its knobs, one JSON line)
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

import warnings  # noqa: E402

from entry_args import parse_entry  # noqa: E402
from run_config import TrainerError  # noqa: E402


def main(argv):
    command, a = parse_entry(argv, checkpoint='FOLDER')
    if command == 'describe':
        from entry_args import describe
        from knobs import KNOBS

        return describe(KNOBS)
    warnings.filterwarnings('ignore')  # the libraries' advice goes to stderr, where a failure's one line belongs
    if command == 'train':
        from train import train

        return train(a.run_dir, USER_OFFLINE)
    from predict import predict

    if command == 'serve':
        from serve_predict import serve

        return serve(predict)
    return predict(a.checkpoint, a.prompts, a.out)


if __name__ == '__main__':
    try:
        main(sys.argv[1:])
    except TrainerError as e:
        if int(os.environ.get('RANK', '0')) == 0:
            print(f'hf-trainer: {e}', file=sys.stderr)
        sys.exit(1)
