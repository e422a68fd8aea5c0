"""What a run trained on, written by rank 0 before training as DIR/training-data.json: the objective, the file it
drew from (its path and sha256), how many of its lines were drawable, and for each drawable line its number, the
sha256 of its text, its draw weight and how often it was drawn; and the dataset version's other file, which this
objective leaves unread, with its line count. So `objective` never drops examples or pairs without saying so."""
import hashlib
import json
import os

import numpy as np

from checkpoint import sha256_file, write_atomic

DATA_RECORD = 'training-data.json'


def _line_hashes(file):
    """{line number: sha256 of its text} for every non-blank line (numbered as training_data.py numbers them)."""
    out = {}
    with open(file, 'rb') as f:
        for n, raw in enumerate(f, start=1):
            if raw.strip():
                out[n] = hashlib.sha256(raw.rstrip(b'\r\n')).hexdigest()
    return out


def data_record(objective, data_file, rows, picks, other_file):
    hashes = _line_hashes(data_file)
    counts = np.bincount(np.asarray(picks, dtype=np.int64), minlength=len(rows)) if len(rows) else []
    record = {
        'objective': objective,
        'file': data_file,
        'sha256': sha256_file(data_file),
        'lines': len(hashes),
        'drawable': len(rows),
        'draws': int(len(picks)),
        'used': [{'line': r[2], 'sha256': hashes[r[2]], 'weight': r[1], 'draws': int(c)} for r, c in zip(rows, counts)],
    }
    if other_file and os.path.isfile(other_file):
        record['unread'] = {'file': other_file, 'lines': len(_line_hashes(other_file))}
    return record


def write_data_record(run_dir, record):
    write_atomic(os.path.join(run_dir, DATA_RECORD), (json.dumps(record, indent=1) + '\n').encode())
