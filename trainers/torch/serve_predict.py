"""The training-job contract's warm protocols for the PyTorch and Hugging Face trainers: one JSON request a line on
stdin, answered by one reply line, `{"id", "ok": true}` or `{"id", "ok": false, "error": "<one line>"}`, until stdin
ends. `predict --serve` (core/job-contract.ts PredictRequest, `{"id", "checkpoint", "prompts", "out"}`) answers as
`predict --checkpoint … --prompts … --out …` does; `train --serve` (TrainRequest, `{"id", "runDir"}`, the PyTorch
trainer only) trains as `train --run-dir …` does, each run seeding its own generators from its run.json. Imports
(torch, transformers) are paid once, not per request. Replies go to the process's own stdout; everything else printed
(by us or a library) goes to stderr, so no stray line reaches the channel."""
import json
import os
import sys

from run_config import TrainerError


def serve(predict):
    """`predict --serve`."""
    serve_requests(lambda req: predict(req['checkpoint'], req['prompts'], req['out']))


def serve_train(train):
    """`train --serve`."""
    serve_requests(lambda req: train(req['runDir']))


def serve_requests(handle):
    channel = os.fdopen(os.dup(1), 'w')
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            handle(req)
            reply = {'id': req['id'], 'ok': True}
        except TrainerError as e:
            reply = {'id': req['id'], 'ok': False, 'error': str(e)}
        except Exception as e:  # the request fails, the server keeps serving
            reply = {'id': req['id'], 'ok': False, 'error': f'{type(e).__name__}: {" ".join(str(e).split())[:300]}'}
        channel.write(json.dumps(reply) + '\n')
        channel.flush()
