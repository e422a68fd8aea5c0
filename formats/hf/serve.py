"""Flywheel's completion server for one frozen hf-causal-lm-v1 checkpoint folder: the warm inference process behind
`flywheel serve` (server/hf/) when vLLM is not used. Flywheel's own code loading frozen weights through
frozen_model.load_frozen (safetensors only, no remote code), never the trainee's `predict`.

It speaks the subset of OpenAI's completions API that vLLM's server speaks and Flywheel's client uses, so one client
serves both: `GET /health`, `GET /v1/models`, `POST /v1/completions` with `{model?, prompt: str, max_tokens,
temperature?: 0}` -> `{id, object, model, choices: [{index, text, finish_reason}], usage}`; and `GET /stats`
(batches generated, requests in them), which vLLM has not. The prompt is tokenized as training tokenized it
(tokenization.py: the chat template, BOS once); vLLM's server tokenizes it its own way. Greedy only; generation
stops at EOS or after max_tokens tokens (the caller cuts the text to its byte budget). Requests that arrive while a
batch is generating are generated together in the next one when their prompts have the same length (no padding, so
a row's tokens are the ones it would get alone).

    python3 serve.py --model FOLDER --port N [--host 127.0.0.1] [--served-model-name NAME] [--max-batch 8]
                     [--parent-pid PID] [--engine transformers|vllm]
    python3 serve.py --probe        # prints {"vllm": bool, "gpu": bool}

`--engine vllm` checks the folder the same way, then replaces itself with vLLM's OpenAI-compatible server on it.
A folder that may not be loaded exits 2 with one line on stderr; the process exits when its parent dies."""
import argparse
import collections
import ctypes
import json
import os
import signal
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frozen_model import FrozenCheckpointError, check_frozen_folder, load_frozen  # noqa: E402
from tokenization import encode  # noqa: E402

PROG = 'serve.py'


def probe():
    import importlib.util

    vllm = importlib.util.find_spec('vllm') is not None
    try:
        import torch

        gpu = bool(torch.cuda.is_available())
    except Exception:  # noqa: BLE001 - no torch, no GPU
        gpu = False
    print(json.dumps({'vllm': vllm, 'gpu': gpu}))


def die_with_parent(parent_pid):
    """SIGTERM when the parent dies (Linux prctl), and a watchdog for the case it died before that was set."""
    try:
        libc = ctypes.CDLL('libc.so.6', use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG; kept across exec
    except OSError:
        pass
    if parent_pid is None:
        return

    def watch():
        while True:
            if os.getppid() != parent_pid:
                os._exit(0)
            time.sleep(1)

    threading.Thread(target=watch, daemon=True).start()


class Pending:
    __slots__ = ('ids', 'max_new', 'done', 'tokens', 'error')

    def __init__(self, ids, max_new):
        self.ids = ids
        self.max_new = max_new
        self.done = threading.Event()
        self.tokens = None
        self.error = None


class Generator:
    """One thread owns the model; requests queue up and leave as batches of prompts of one length."""

    def __init__(self, model, tokenizer, max_batch):
        import torch

        self.torch = torch
        self.model = model
        self.tokenizer = tokenizer
        self.max_batch = max_batch
        self.eos = model.generation_config.eos_token_id
        if self.eos is None:
            self.eos = tokenizer.eos_token_id
        self.eos_ids = set(self.eos if isinstance(self.eos, list) else [self.eos] if self.eos is not None else [])
        pad = tokenizer.pad_token_id
        self.pad = pad if pad is not None else (next(iter(self.eos_ids)) if self.eos_ids else 0)
        self.max_positions = getattr(model.config, 'max_position_embeddings', None) or 2048
        self.batches = 0
        self.rows = 0
        self.queue = collections.deque()
        self.cv = threading.Condition()
        threading.Thread(target=self.loop, daemon=True).start()

    def encode(self, prompt):
        """The prompt's ids as training made them (tokenization.py `encode`: chat template, BOS once)."""
        ids = encode(self.tokenizer, prompt)[0]
        # The newest context that fits, with room for one new token at least.
        return ids[-(self.max_positions - 1):]

    def submit(self, ids, max_tokens):
        p = Pending(ids, max(0, min(max_tokens, self.max_positions - len(ids))))
        if p.max_new == 0:
            p.tokens = []
            return p
        with self.cv:
            self.queue.append(p)
            self.cv.notify()
        p.done.wait()
        return p

    def take(self):
        with self.cv:
            while not self.queue:
                self.cv.wait()
            first = self.queue.popleft()
            batch, rest = [first], collections.deque()
            while self.queue:
                p = self.queue.popleft()
                (batch if len(batch) < self.max_batch and len(p.ids) == len(first.ids) else rest).append(p)
            self.queue.extendleft(reversed(rest))
            return batch

    def loop(self):
        while True:
            batch = self.take()
            try:
                self.generate(batch)
            except Exception as e:  # noqa: BLE001 - the request answers 500, the server lives on
                for p in batch:
                    p.error = f'{type(e).__name__}: {e}'
            for p in batch:
                p.done.set()

    def generate(self, batch):
        torch = self.torch
        self.batches += 1
        self.rows += len(batch)
        ids = torch.tensor([p.ids for p in batch], dtype=torch.long, device=self.model.device)
        with torch.inference_mode():
            out = self.model.generate(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=max(p.max_new for p in batch),
                do_sample=False,
                num_beams=1,
                temperature=None,
                top_p=None,
                top_k=None,
                eos_token_id=list(self.eos_ids) or None,
                pad_token_id=self.pad,
            )
        for row, p in zip(out[:, ids.shape[1]:].tolist(), batch):
            row = row[: p.max_new]
            for i, t in enumerate(row):
                if t in self.eos_ids:
                    row = row[: i + 1]
                    break
            p.tokens = row

    def answer(self, prompt, max_tokens):
        p = self.submit(self.encode(prompt), max_tokens)
        if p.error:
            raise RuntimeError(p.error)
        stopped = bool(p.tokens) and p.tokens[-1] in self.eos_ids
        text = self.tokenizer.decode(p.tokens, skip_special_tokens=True)
        return text, 'stop' if stopped else 'length', len(p.ids), len(p.tokens)


class RequestError(Exception):
    def __init__(self, status, message, kind='invalid_request_error'):
        super().__init__(message)
        self.status = status
        self.kind = kind


def completion_request(body, served_name):
    if not isinstance(body, dict):
        raise RequestError(400, 'the body must be a JSON object')
    if body.get('model') not in (None, served_name):
        raise RequestError(404, f'The model `{body.get("model")}` does not exist.', 'NotFoundError')
    prompt = body.get('prompt')
    if not isinstance(prompt, str):
        raise RequestError(400, 'prompt: must be a string (one prompt per request)')
    max_tokens = body.get('max_tokens', 16)
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 0:
        raise RequestError(400, 'max_tokens: must be a non-negative integer')
    temperature = body.get('temperature', 0)
    if not isinstance(temperature, (int, float)) or temperature != 0:
        raise RequestError(400, 'temperature: this server decodes greedily; send 0 or leave it out')
    if body.get('n', 1) != 1 or body.get('stream'):
        raise RequestError(400, 'n and stream are not supported')
    return prompt, max_tokens


def make_handler(generator, served_name):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def log_message(self, *_args):
            pass

        def reply(self, status, body):
            data = (json.dumps(body) + '\n').encode() if body is not None else b''
            self.send_response(status)
            self.send_header('content-type', 'application/json')
            self.send_header('content-length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == '/health':
                self.reply(200, None)
            elif self.path == '/stats':
                self.reply(200, {'batches': generator.batches, 'requests': generator.rows})
            elif self.path == '/v1/models':
                self.reply(200, {'object': 'list', 'data': [{'id': served_name, 'object': 'model', 'owned_by': 'flywheel'}]})
            else:
                self.reply(404, {'error': {'message': f'no such endpoint: GET {self.path}', 'type': 'NotFoundError'}})

        def do_POST(self):
            try:
                if self.path != '/v1/completions':
                    raise RequestError(404, f'no such endpoint: POST {self.path}', 'NotFoundError')
                length = int(self.headers.get('content-length') or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b'null')
                except ValueError as e:
                    raise RequestError(400, f'malformed JSON: {e}') from None
                prompt, max_tokens = completion_request(body, served_name)
                text, finish, prompt_tokens, completion_tokens = generator.answer(prompt, max_tokens)
                self.reply(
                    200,
                    {
                        'id': f'cmpl-{uuid.uuid4().hex}',
                        'object': 'text_completion',
                        'created': int(time.time()),
                        'model': served_name,
                        'choices': [{'index': 0, 'text': text, 'finish_reason': finish, 'logprobs': None}],
                        'usage': {
                            'prompt_tokens': prompt_tokens,
                            'completion_tokens': completion_tokens,
                            'total_tokens': prompt_tokens + completion_tokens,
                        },
                    },
                )
            except RequestError as e:
                self.reply(e.status, {'error': {'message': str(e), 'type': e.kind, 'code': e.status}})
            except Exception as e:  # noqa: BLE001 - one request's failure, reported to it
                self.reply(500, {'error': {'message': f'{type(e).__name__}: {e}', 'type': 'InternalServerError', 'code': 500}})

    return Handler


def exec_vllm(a):
    """Replaces this process with vLLM's OpenAI-compatible server: the folder already checked, remote code off."""
    argv = [
        sys.executable,
        '-m',
        'vllm.entrypoints.openai.api_server',
        '--model',
        a.model,
        '--served-model-name',
        a.served_model_name,
        '--host',
        a.host,
        '--port',
        str(a.port),
        '--load-format',
        'safetensors',
        '--seed',
        '0',
    ]
    os.execv(sys.executable, argv)


def main(argv):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split('\n')[0])
    p.add_argument('--probe', action='store_true', help='print {"vllm": bool, "gpu": bool} and exit')
    p.add_argument('--model', help='the checkpoint folder')
    p.add_argument('--port', type=int)
    p.add_argument('--host', default='127.0.0.1')
    p.add_argument('--served-model-name', help='the model name replies carry (the checkpoint id); default: the folder')
    p.add_argument('--max-batch', type=int, default=8)
    p.add_argument('--threads', type=int, default=0, help='torch CPU threads (0: torch default)')
    p.add_argument('--parent-pid', type=int, help='exit when this process is no longer the parent')
    p.add_argument('--engine', choices=('transformers', 'vllm'), default='transformers')
    a = p.parse_args(argv)
    if a.probe:
        probe()
        return 0
    if not a.model or a.port is None:
        print(f'{PROG}: --model and --port are required', file=sys.stderr)
        return 2
    a.served_model_name = a.served_model_name or a.model
    die_with_parent(a.parent_pid)
    try:
        check_frozen_folder(a.model)
    except FrozenCheckpointError as e:
        print(f'{PROG}: {e}', file=sys.stderr)
        return 2
    if a.engine == 'vllm':
        exec_vllm(a)
    import torch

    if a.threads > 0:
        torch.set_num_threads(a.threads)
    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    try:
        model, tokenizer = load_frozen(a.model, device=device)
    except FrozenCheckpointError as e:
        print(f'{PROG}: {e}', file=sys.stderr)
        return 2
    server = ThreadingHTTPServer((a.host, a.port), make_handler(Generator(model, tokenizer, a.max_batch), a.served_model_name))
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown, daemon=True).start())
    print(f'{PROG}: serving {a.served_model_name} on http://{a.host}:{server.server_port} ({device})', file=sys.stderr, flush=True)
    server.serve_forever()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
