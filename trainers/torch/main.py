"""The reference PyTorch trainer (training-job contract, see core/job-contract.ts):
    python3 trainers/torch/main.py train --run-dir DIR          (or under torchrun)
    python3 trainers/torch/main.py predict --checkpoint FILE --prompts IN.jsonl --out OUT.jsonl
No SIGTERM handler on purpose: the default action ends the process at once, and every file it writes is a
whole-line append or a rename, so nothing needs cleaning up."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from run_config import TrainerError  # noqa: E402

USAGE = 'usage: main.py train --run-dir DIR | predict --checkpoint FILE --prompts IN.jsonl --out OUT.jsonl'


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise TrainerError(f'{message} ({USAGE})')


def main(argv):
    parser = _Parser(prog='main.py', add_help=False)
    parser.add_argument('command', choices=['train', 'predict'])
    for flag in ('--run-dir', '--checkpoint', '--prompts', '--out'):
        parser.add_argument(flag)
    a = parser.parse_args(argv)
    if a.command == 'train' and a.run_dir and not (a.checkpoint or a.prompts or a.out):
        from train import train
        return train(a.run_dir)
    if a.command == 'predict' and a.checkpoint and a.prompts and a.out and not a.run_dir:
        from predict import predict
        return predict(a.checkpoint, a.prompts, a.out)
    raise TrainerError(USAGE)


if __name__ == '__main__':
    try:
        main(sys.argv[1:])
    except TrainerError as e:
        # Expected failures are one line (from rank 0 alone under torchrun); anything else keeps its traceback.
        rank = int(os.environ.get('RANK', '0'))
        if rank == 0:
            print(f'torch-trainer: {e}', file=sys.stderr)
        sys.exit(1)
