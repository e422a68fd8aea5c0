"""`train --run-dir DIR`: trains the byte-level GPT as DIR/run.json says, appending metrics.jsonl and writing
checkpoints with a manifest; restarted on the same directory it resumes from the newest checkpoint. It reads
run.json and the dataset version only (its examples when run.json names them, else its text), never an eval file. Under torchrun every process trains on windows of
its own (DistributedDataParallel) and rank 0 alone writes metrics and checkpoints."""
import contextlib
import math
import os
import random
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from checkpoint import load_checkpoint, newest_checkpoint, save_checkpoint
from contract_files import CHECKPOINTS_DIR
from data import data_generator, load_training_windows
from model import GPT, GPTConfig
from run_config import TrainerError, learning_rate, read_run_json, resolve_params
from throughput import MetricsWriter, peak_flops


def train(run_dir):
    run = read_run_json(run_dir)
    p = resolve_params(run['params'])
    if os.environ.get('FLYWHEEL_TORCH_THREADS'):
        torch.set_num_threads(int(os.environ['FLYWHEEL_TORCH_THREADS']))
    world, rank = int(os.environ.get('WORLD_SIZE', '1')), int(os.environ.get('RANK', '0'))
    cuda = torch.cuda.is_available()
    device = torch.device('cuda', int(os.environ.get('LOCAL_RANK', '0'))) if cuda else torch.device('cpu')
    if cuda:
        torch.cuda.set_device(device)
    if world > 1:
        dist.init_process_group('nccl' if cuda else 'gloo')
    try:
        _train(run_dir, run, p, world, rank, device)
    finally:
        if world > 1:
            dist.destroy_process_group()


def _train(run_dir, run, p, world, rank, device):
    config = GPTConfig(n_layer=p['n_layer'], n_head=p['n_head'], d_model=p['d_model'], context=p['context'], dropout=p['dropout'])
    resume = newest_checkpoint(run_dir)
    if resume and resume['step'] >= p['steps']:
        return  # already finished: a relaunch after the last checkpoint is a no-op
    if resume and resume['config'] != config.to_dict():
        raise TrainerError(f'the newest checkpoint in {run_dir} has model {resume["config"]}, run.json asks for {config.to_dict()}')
    windows = load_training_windows(run_dir, run['dataset'], config.context)
    if rank == 0:
        remove_stale_temp_files(run_dir)

    seed = run['seed']
    random.seed(seed)
    torch.manual_seed(seed)
    model = GPT(config).to(device)
    if not resume and run.get('baseCheckpoint'):
        base_file = os.path.join(run_dir, run['baseCheckpoint'])
        base = load_checkpoint(base_file, 'baseCheckpoint', device)
        if base['config'] != config.to_dict():
            raise TrainerError(f'baseCheckpoint {base_file} has model {base["config"]}, run.json asks for {config.to_dict()}')
        model.load_state_dict(base['model'])
    decay = [q for q in model.parameters() if q.dim() >= 2]
    no_decay = [q for q in model.parameters() if q.dim() < 2]
    opt = torch.optim.AdamW([{'params': decay, 'weight_decay': p['weightDecay']}, {'params': no_decay, 'weight_decay': 0.0}],
                            lr=p['lr'], betas=(0.9, 0.95))
    gen = data_generator(seed, rank)
    start = 0
    if resume:
        model.load_state_dict(resume['model'])
        opt.load_state_dict(resume['optimizer'])
        start = resume['step']
        if len(resume['rng']) == world:
            restore_rng(resume['rng'][rank], gen)
        else:
            # Another process count than the run that wrote it: a fresh but deterministic data order.
            gen = data_generator(seed + start, rank)
            if rank == 0:
                print(f'torch-trainer: resuming step {start} on {world} processes (checkpoint from {len(resume["rng"])}): new data order', file=sys.stderr)

    ddp = (DistributedDataParallel(model, device_ids=[device.index] if device.type == 'cuda' else None) if world > 1 else model)
    metrics = MetricsWriter(run_dir) if rank == 0 else None

    def checkpoint(step):
        rng = rng_state(gen)
        ranks = [None] * world
        if world > 1:
            dist.all_gather_object(ranks, rng)
        else:
            ranks = [rng]
        if rank == 0:
            save_checkpoint(run_dir, step, {'model': model.state_dict(), 'optimizer': opt.state_dict(), 'rng': ranks,
                                            'params': p, 'config': config.to_dict(), 'seed': seed})

    try:
        if p['steps'] == 0:
            checkpoint(0)  # the untrained model: a campaign's baseline
            return
        autocast = torch.autocast('cuda', dtype=torch.bfloat16) if device.type == 'cuda' else contextlib.nullcontext()
        peak = peak_flops(device)
        flops_per_token = model.flops_per_token()
        tokens_per_step = p['batchSize'] * config.context * world
        window_nats, window_steps, window_start = torch.zeros((), device=device), 0, time.perf_counter()
        every = run['checkpointEvery']
        ddp.train()
        for t in range(start + 1, p['steps'] + 1):
            lr = learning_rate(p, t)
            for g in opt.param_groups:
                g['lr'] = lr
            x, y = windows.sample(p['batchSize'], config.context, gen)
            with autocast:
                _, loss = ddp(x.to(device), y.to(device))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if p['gradClip'] > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), p['gradClip'])
            opt.step()
            window_nats += loss.detach()
            window_steps += 1

            log_now = t % p['logEvery'] == 0 or t == p['steps']
            save_now = (every > 0 and t % every == 0) or t == p['steps']
            if not (log_now or save_now):
                continue
            mean_nats = window_nats / window_steps
            if world > 1:
                dist.all_reduce(mean_nats)
                mean_nats /= world
            bits = mean_nats.item() / math.log(2)
            if not math.isfinite(bits):
                raise TrainerError(f'training diverged at step {t} in {run_dir}: loss {bits} (try a lower params.lr or params.gradClip)')
            if log_now:
                elapsed = time.perf_counter() - window_start
                tps = window_steps * tokens_per_step / elapsed if elapsed > 0 else 0.0
                line = {'step': t, 'loss': bits, 'lr': lr, 'tokens': t * tokens_per_step, 'tokens_per_s': tps}
                if peak:
                    line['mfu'] = flops_per_token * tps / (peak * world)
                if metrics:
                    metrics.write(line)
                window_nats, window_steps = torch.zeros((), device=device), 0
            if save_now:
                checkpoint(t)
            if log_now:
                window_start = time.perf_counter()
    finally:
        if metrics:
            metrics.close()


def remove_stale_temp_files(run_dir):
    """A kill during a checkpoint write leaves its temporary file behind (never the manifest's files)."""
    folder = os.path.join(run_dir, CHECKPOINTS_DIR)
    for name in os.listdir(folder) if os.path.isdir(folder) else []:
        if '.tmp-' in name:
            os.remove(os.path.join(folder, name))


def rng_state(gen):
    return {'python': random.getstate(), 'torch': torch.get_rng_state(),
            'cuda': torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [], 'data': gen.get_state()}


def restore_rng(s, gen):
    random.setstate(s['python'])
    torch.set_rng_state(s['torch'])
    if torch.cuda.is_available() and len(s['cuda']) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(s['cuda'])
    gen.set_state(s['data'])
