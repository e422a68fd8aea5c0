"""What every reference trainer reports beside its loss: metrics.jsonl written a whole line at a time, and the
peak FLOP/s that MFU is measured against. Shared by trainers/torch and trainers/hf."""
import json
import os

import torch

from contract_files import METRICS_FILE

# Dense bf16 peak FLOP/s per GPU, for MFU. FLYWHEEL_PEAK_FLOPS (per process) overrides it, covers other
# cards, and is the only way to get an MFU figure on the CPU, whose peak this table cannot know.
PEAK_BF16_FLOPS = [('H200', 989e12), ('H100 PCIe', 756e12), ('H100', 989e12), ('A100', 312e12)]


class MetricsWriter:
    """Appends one whole line per os.write, so a concurrent reader (metrics-stream.ts) sees whole lines."""

    def __init__(self, run_dir):
        self.fd = os.open(os.path.join(run_dir, METRICS_FILE), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        # A crash mid-line leaves a fragment; start on a fresh line so every later line parses.
        with open(os.path.join(run_dir, METRICS_FILE), 'rb') as f:
            f.seek(0, os.SEEK_END)
            if f.tell() > 0:
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b'\n':
                    os.write(self.fd, b'\n')

    def write(self, line):
        os.write(self.fd, (json.dumps(line) + '\n').encode())

    def close(self):
        os.close(self.fd)


def peak_flops(device):
    if os.environ.get('FLYWHEEL_PEAK_FLOPS'):
        return float(os.environ['FLYWHEEL_PEAK_FLOPS'])
    if device.type != 'cuda':
        return None
    name = torch.cuda.get_device_name(device)
    return next((f for key, f in PEAK_BF16_FLOPS if key in name), None)
