"""The two things the HF trainer adds to TRL's training loop, as transformers callbacks: metrics.jsonl lines every
`logEvery` steps and at the last, and each resume state TRL saves (DIR/hf-state/checkpoint-<N>) exported as a frozen
checkpoint folder and listed in the manifest. Rank 0 alone writes either."""
import json
import math
import time

from transformers import TrainerCallback

from run_config import TrainerError
from throughput import MetricsWriter

# DPO's own log keys worth streaming, under names without a slash.
DPO_KEYS = {'rewards/margins': 'reward_margin', 'rewards/accuracies': 'reward_accuracy'}


class MetricsCallback(TrainerCallback):
    """`{step, loss, lr, tokens, tokens_per_s, mfu?}`: loss is the training loss over the logging window (SFT: the
    mean over sequences of each one's cross-entropy in nats per completion token, example_loss.py; DPO: the DPO loss); tokens are the non-padding tokens trained on
    so far, over every process. A resumed run writes nothing for the steps its metrics already hold, so the curve
    continues where it stopped, with no step twice."""

    def __init__(self, run_dir, last_written, flops_per_token, peak, processes):
        self.run_dir = run_dir
        self.last_written = last_written
        self.flops_per_token = flops_per_token
        self.peak = peak
        self.processes = processes
        self.writer = None

    def on_train_begin(self, args, state, control, **kwargs):
        self.window = (time.perf_counter(), state.num_input_tokens_seen)
        if state.is_world_process_zero:
            self.writer = MetricsWriter(self.run_dir)

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step >= state.max_steps:
            control.should_log = True  # the last step has a line even when logEvery does not divide it
        return control

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not logs or 'loss' not in logs:
            return
        now, tokens = time.perf_counter(), state.num_input_tokens_seen
        started, tokens_then = self.window
        self.window = (now, tokens)
        loss = float(logs['loss'])
        if not math.isfinite(loss):
            raise TrainerError(f'training diverged at step {state.global_step} in {self.run_dir}: loss {loss} (try a lower params.lr)')
        if not self.writer or state.global_step <= self.last_written:
            return
        tps = (tokens - tokens_then) / (now - started) if now > started else 0.0
        line = {'step': state.global_step, 'loss': loss, 'lr': float(logs.get('learning_rate', 0.0)), 'tokens': int(tokens), 'tokens_per_s': tps}
        if self.peak:
            line['mfu'] = self.flops_per_token * tps / (self.peak * self.processes)
        for key, name in DPO_KEYS.items():
            if key in logs:
                line[name] = float(logs[key])
        self.writer.write(line)
        self.last_written = state.global_step

    def on_train_end(self, args, state, control, **kwargs):
        if self.writer:
            self.writer.close()
            self.writer = None


class ExportCallback(TrainerCallback):
    """After TRL has saved the resume state of step N, `export(step)` writes and lists checkpoints/step-N."""

    def __init__(self, export):
        self.export = export

    def on_save(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            self.export(state.global_step)


class FinalSaveWeightsOnly(TrainerCallback):
    """The last step's save keeps the weights and the trainer state but not the optimizer, scheduler and RNG state:
    a finished run is never resumed (train.py removes its state folder once it ends, and a relaunch after the last
    listed checkpoint is a no-op), so that state, for a 0.5B model about 4 GB, was written only to be deleted. A kill
    before the last checkpoint is listed resumes from the one before, whose resume state is whole."""

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step >= state.max_steps:
            args.save_only_model = True
        return control


def last_metric_step(file):
    """The highest step metrics.jsonl holds (0 when there is none): a resumed run writes only later steps."""
    last = 0
    try:
        with open(file, 'rb') as f:
            for raw in f:
                try:
                    last = max(last, int(json.loads(raw)['step']))
                except (ValueError, KeyError, TypeError):
                    continue  # a fragment left by a kill mid-line
    except FileNotFoundError:
        pass
    return last
