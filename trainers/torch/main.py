"""The reference PyTorch trainer (training-job contract, see core/job-contract.ts):
    python3 trainers/torch/main.py train --run-dir DIR          (or under torchrun)
    python3 trainers/torch/main.py predict --checkpoint FILE --prompts IN.jsonl --out OUT.jsonl
    python3 trainers/torch/main.py train --serve            (the warm training protocol: serve_predict.py)
    python3 trainers/torch/main.py predict --serve          (the warm protocol: serve_predict.py)
    python3 trainers/torch/main.py describe                 (its knobs, one JSON line)
No SIGTERM handler on purpose: the default action ends the process at once, and every file it writes is a
whole-line append or a rename, so nothing needs cleaning up."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from entry_args import parse_entry  # noqa: E402
from run_config import TrainerError  # noqa: E402


def main(argv):
    command, a = parse_entry(argv, serve_train=True)
    if command == 'describe':
        from entry_args import describe
        from run_config import KNOBS
        return describe(KNOBS)
    if command == 'train':
        from train import train
        return train(a.run_dir)
    if command == 'serve-train':
        from train import train
        from serve_predict import serve_train
        return serve_train(train)
    from predict import predict
    if command == 'serve':
        from serve_predict import serve
        return serve(predict)
    return predict(a.checkpoint, a.prompts, a.out)


if __name__ == '__main__':
    try:
        main(sys.argv[1:])
    except TrainerError as e:
        # Expected failures are one line (from rank 0 alone under torchrun); anything else keeps its traceback.
        rank = int(os.environ.get('RANK', '0'))
        if rank == 0:
            print(f'torch-trainer: {e}', file=sys.stderr)
        sys.exit(1)
