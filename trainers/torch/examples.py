"""A dataset version's examples: run.json `dataset.examplesFile` (train.jsonl), one example a line,
`{prompt, completion, category, weight, source}` or `{messages: [{role, content}], category, weight, source}`
(core/dataset/example-line.ts `TrainExample`). No torch here, so the chat rendering can be checked on its own."""
import json
import math

from run_config import TrainerError

ROLES = ('system', 'user', 'assistant')


def prompt_and_completion(e):
    """The chat rendering every built-in trainer uses, the same as core/dataset/example-line.ts
    `promptAndCompletion`: every message but the last as `<role>: <content>\\n`, then `assistant: `; the last
    (the assistant's) message is the completion."""
    if 'messages' not in e:
        return e['prompt'], e['completion']
    head = ''.join(f"{m['role']}: {m['content']}\n" for m in e['messages'][:-1])
    return head + 'assistant: ', e['messages'][-1]['content']


def _problem(e):
    """The first thing wrong with a parsed line, or None (the platform checked it; this guards the trainer)."""
    if not isinstance(e, dict):
        return 'must be a JSON object'
    w = e.get('weight', 1)
    if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
        return 'weight: must be a finite number >= 0'
    if 'messages' in e:
        m = e['messages']
        if not isinstance(m, list) or not m:
            return 'messages: must hold at least one message'
        for i, msg in enumerate(m):
            if not isinstance(msg, dict) or msg.get('role') not in ROLES or not isinstance(msg.get('content'), str):
                return f'messages.{i}: must be {{role: system|user|assistant, content: string}}'
        if m[-1]['role'] != 'assistant':
            return "messages: the last message must be the assistant's (the loss is on it)"
        return None
    if not isinstance(e.get('prompt'), str):
        return 'prompt: must be a string'
    if not isinstance(e.get('completion'), str):
        return 'completion: must be a string'
    return None


def read_examples(file):
    """[(prompt bytes, completion bytes, weight)] in file order; a bad line fails as `FILE:LINE: problem`."""
    out = []
    try:
        with open(file, 'rb') as f:
            for n, raw in enumerate(f, start=1):
                if not raw.strip():
                    continue
                try:
                    e = json.loads(raw)
                except ValueError:
                    raise TrainerError(f'{file}:{n}: not JSON') from None
                problem = _problem(e)
                if problem:
                    raise TrainerError(f'{file}:{n}: {problem}')
                prompt, completion = prompt_and_completion(e)
                out.append((prompt.encode('utf-8'), completion.encode('utf-8'), float(e.get('weight', 1))))
    except OSError as e:
        raise TrainerError(f'cannot read the examples {file}: {e.strerror or e}') from None
    return out

