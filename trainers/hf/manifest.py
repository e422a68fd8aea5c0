"""Frozen checkpoints (format hf-causal-lm-v1) and their manifest: a folder `checkpoints/step-<N>/` that
from_pretrained loads with no remote code, written under a temporary name, synced and renamed into place; only then
is checkpoints/manifest.json (replaced atomically, trainers/torch/checkpoint.py) rewritten to list it with its
digest, computed exactly as services/checkpoint-manifest.ts `sha256Folder` computes it."""
import hashlib
import json
import os
import shutil

from checkpoint import read_manifest, sha256_file, write_atomic
from contract_files import CHECKPOINTS_DIR, MANIFEST_FILE
from run_config import TrainerError

FORMAT = 'hf-causal-lm-v1'
TEMP_PREFIX = '.tmp-'


def sha256_folder(folder):
    """(digest, {relpath: sha256}): sha256 over `<relpath>\\t<file sha256>\\n` for every regular file, sorted by
    '/'-separated relative path in byte order. Anything but files and folders is refused."""
    files = {}
    for root, dirs, names in os.walk(folder):
        for name in dirs + names:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, folder).replace(os.sep, '/')
            if os.path.islink(full) or not (os.path.isdir(full) or os.path.isfile(full)):
                raise TrainerError(f'{full}: a checkpoint folder holds files and folders only')
            if os.path.isfile(full):
                files[rel] = sha256_file(full)
    names = sorted(files, key=lambda n: n.encode('utf-8'))
    h = hashlib.sha256()
    for n in names:
        h.update(f'{n}\t{files[n]}\n'.encode('utf-8'))
    return h.hexdigest(), {n: files[n] for n in names}


def _fsync_tree(folder):
    for root, _dirs, names in os.walk(folder):
        for name in names:
            fd = os.open(os.path.join(root, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish_checkpoint(run_dir, step, write):
    """Writes checkpoint `step` with `write(tmp_folder)`, renames it to checkpoints/step-<step> and lists it."""
    folder = os.path.join(run_dir, CHECKPOINTS_DIR)
    os.makedirs(folder, exist_ok=True)
    rel = f'{CHECKPOINTS_DIR}/step-{step}'
    final = os.path.join(run_dir, rel)
    tmp = os.path.join(folder, f'{TEMP_PREFIX}step-{step}-{os.getpid()}')
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    write(tmp)
    _fsync_tree(tmp)
    if os.path.exists(final):  # a run resumed before this step: the listed folder is replaced by the same step's
        shutil.rmtree(final)
    os.replace(tmp, final)
    _fsync_tree(folder)
    digest, files = sha256_folder(final)
    entries = [c for c in read_manifest(run_dir) if c.get('step') != step]
    entries.append({'path': rel, 'sha256': digest, 'files': files, 'step': step, 'format': FORMAT})
    entries.sort(key=lambda c: c['step'])
    write_atomic(os.path.join(run_dir, MANIFEST_FILE), (json.dumps({'checkpoints': entries}, indent=2) + '\n').encode())
    return final


def remove_stale_temp_folders(run_dir):
    """A kill during an export leaves its temporary folder behind (never a listed one)."""
    folder = os.path.join(run_dir, CHECKPOINTS_DIR)
    for name in os.listdir(folder) if os.path.isdir(folder) else []:
        if name.startswith(TEMP_PREFIX) and os.path.isdir(os.path.join(folder, name)):
            shutil.rmtree(os.path.join(folder, name), ignore_errors=True)


def newest_listed_step(run_dir):
    """The newest step the manifest lists (its folder checked against its digest), or None."""
    entries = read_manifest(run_dir)
    if not entries:
        return None
    newest = max(entries, key=lambda c: c['step'])
    path = os.path.join(run_dir, newest['path'])
    if newest.get('format') != FORMAT:
        raise TrainerError(f'checkpoint {path} has format {newest.get("format")}, expected {FORMAT}')
    if not os.path.isdir(path) or sha256_folder(path)[0] != newest['sha256']:
        raise TrainerError(f'checkpoint {path} does not match its sha256 in {os.path.join(run_dir, MANIFEST_FILE)}')
    return newest['step']
