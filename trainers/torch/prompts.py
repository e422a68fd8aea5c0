"""The prompts file `predict` answers (core/job-contract.ts PredictPrompt): one `{id, prompt, maxBytes}` a line,
every line checked before any is answered, so a bad file fails fast and nothing is written. Shared by
trainers/torch and trainers/hf."""
import json

from run_config import TrainerError


def parse_prompt(line, where):
    try:
        p = json.loads(line)
    except ValueError:
        raise TrainerError(f'{where}: not JSON') from None
    if not isinstance(p, dict) or not isinstance(p.get('id'), str) or not isinstance(p.get('prompt'), str):
        raise TrainerError(f'{where}: id and prompt must be strings')
    m = p.get('maxBytes')
    if isinstance(m, float) and m.is_integer():
        m = int(m)  # JSON has one number type: 16.0 is the integer 16, as for the TypeScript trainer
    if not isinstance(m, int) or isinstance(m, bool) or not 0 <= m <= 65536:
        raise TrainerError(f'{where}: maxBytes must be an integer from 0 to 65536')
    return p['id'], p['prompt'], m


def read_prompts(prompts_file):
    """[(id, prompt, maxBytes)] in file order."""
    try:
        with open(prompts_file, encoding='utf-8') as f:
            lines = [(i + 1, l) for i, l in enumerate(f.read().split('\n')) if l.strip()]
    except (OSError, UnicodeDecodeError) as e:
        raise TrainerError(f'cannot read {prompts_file}: {e}') from None
    return [parse_prompt(l, f'{prompts_file}:{n}') for n, l in lines]
