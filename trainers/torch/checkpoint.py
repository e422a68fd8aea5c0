"""Checkpoints and the manifest of the training-job contract. A checkpoint file is written under a temporary
name, synced and renamed; only then is the manifest (itself written the same way) rewritten to list it,
so a reader or a restarted trainer never sees half a file or a manifest naming a missing one."""
import hashlib
import json
import os

import torch

from contract_files import CHECKPOINTS_DIR, MANIFEST_FILE
from run_config import TrainerError

FORMAT = 'torch-gpt-v1'


def sha256_file(file):
    h = hashlib.sha256()
    with open(file, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            h.update(chunk)
    return h.hexdigest()


def _replace_atomically(file, write):
    tmp = f'{file}.tmp-{os.getpid()}'
    with open(tmp, 'wb') as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, file)
    dir_fd = os.open(os.path.dirname(file) or '.', os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def write_atomic(file, data: bytes):
    _replace_atomically(file, lambda f: f.write(data))


def read_manifest(run_dir):
    file = os.path.join(run_dir, MANIFEST_FILE)
    if not os.path.exists(file):
        return []
    try:
        with open(file, encoding='utf-8') as f:
            entries = json.load(f)['checkpoints']
        assert isinstance(entries, list)
        return entries
    except (OSError, ValueError, KeyError, TypeError, AssertionError) as e:
        raise TrainerError(f'{file} is unreadable: {e!r}') from None


def save_checkpoint(run_dir, step, state):
    rel = f'{CHECKPOINTS_DIR}/step-{step}.pt'
    os.makedirs(os.path.join(run_dir, CHECKPOINTS_DIR), exist_ok=True)
    file = os.path.join(run_dir, rel)
    _replace_atomically(file, lambda f: torch.save({'format': FORMAT, 'step': step, **state}, f))
    entries = [c for c in read_manifest(run_dir) if c.get('step') != step]
    entries.append({'path': rel, 'sha256': sha256_file(file), 'step': step, 'format': FORMAT})
    entries.sort(key=lambda c: c['step'])
    write_atomic(os.path.join(run_dir, MANIFEST_FILE), (json.dumps({'checkpoints': entries}, indent=2) + '\n').encode())


def load_checkpoint(file, what, device='cpu'):
    """The checkpoint dict in `file`; `what` names it in errors. Tensors and plain data only (weights_only)."""
    try:
        c = torch.load(file, map_location=device, weights_only=True)
    except FileNotFoundError:
        raise TrainerError(f'{what} {file} does not exist') from None
    except Exception as e:  # a truncated zip, a pickle of something else: all mean "not our checkpoint"
        raise TrainerError(f'{what} {file}: not a {FORMAT} checkpoint ({type(e).__name__})') from None
    if not isinstance(c, dict) or c.get('format') != FORMAT:
        raise TrainerError(f'{what} {file}: not a {FORMAT} checkpoint')
    return c


def newest_checkpoint(run_dir):
    """The manifest's newest checkpoint (its bytes checked against the recorded sha256), or None."""
    entries = read_manifest(run_dir)
    if not entries:
        return None
    newest = max(entries, key=lambda c: c['step'])
    file = os.path.join(run_dir, newest['path'])
    if newest.get('format') != FORMAT:
        raise TrainerError(f'checkpoint {file} has format {newest.get("format")}, expected {FORMAT}')
    if not os.path.exists(file) or sha256_file(file) != newest['sha256']:
        raise TrainerError(f'checkpoint {file} does not match its sha256 in {os.path.join(run_dir, MANIFEST_FILE)}')
    return load_checkpoint(file, 'the newest checkpoint')
