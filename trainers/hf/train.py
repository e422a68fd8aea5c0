"""`train --run-dir DIR`: fine-tunes a causal LM with TRL as DIR/run.json says: SFT on the dataset version's
examples with the loss on the completions only, each example's mean over its own tokens (example_loss.py; full or
LoRA), or DPO on its preference pairs (`objective`, see knobs.py; `auto` refuses a version with both rather than
drop one). Writes what it drew from to DIR/training-data.json (data_record.py), appends metrics.jsonl, writes
frozen checkpoints (checkpoints/step-<N>/, manifest.py) and keeps its resume state (optimizer, scheduler, RNG, data
position: TRL's own checkpoint) in DIR/hf-state/, outside every listed folder. Restarted on the same directory it
resumes from the newest listed checkpoint on the same data order. Under torchrun or accelerate launch every process
trains (DDP, or FSDP with `fsdp: true`) and rank 0 alone writes."""
import os
import shutil
from dataclasses import dataclass

from base_model import load_model, load_tokenizer, start_sources
from contract_files import METRICS_FILE
from knobs import resolve_params, total_steps, trl_arguments
from manifest import newest_listed_step, publish_checkpoint, remove_stale_temp_folders
from run_config import TrainerError, read_run_json
from data_record import data_record, write_data_record
from training_data import dataset_file, drawn_dataset, draws, read_pair_rows, read_sft_rows

STATE_DIR = 'hf-state'
# A TRL checkpoint holds these beside the weights; a frozen folder must not (pickles, and the resume state).
NOT_FROZEN = ('optimizer.pt', 'scheduler.pt', 'scaler.pt', 'trainer_state.json', 'training_args.bin')


def objective_of(p, pairs_file):
    if p['objective'] == 'dpo' and not pairs_file:
        raise TrainerError('run.json: params.objective is "dpo" but the dataset version has no pairs (dataset.pairsFile)')
    return p['objective']


def auto_objective(sft_rows, pair_rows, examples_file, pairs_file):
    """`auto`: the one kind of data the version has; both is refused rather than one dropped in silence."""
    if sft_rows and pair_rows:
        raise TrainerError(
            f'run.json: params.objective is "auto" but the dataset version has both examples ({len(sft_rows)} drawable in '
            f'{examples_file}) and preference pairs ({len(pair_rows)} in {pairs_file}); auto would train on one and drop '
            'the other: set params.objective to "sft" (the examples) or "dpo" (the pairs; dpoSftWeight adds SFT on their '
            'chosen answers)')
    return 'dpo' if pair_rows else 'sft'


def set_hub_access(sources, user_offline):
    """The hub stays off (HF_HUB_OFFLINE=1) when every source is a local folder, unless the caller set it."""
    if user_offline is None:
        os.environ['HF_HUB_OFFLINE'] = '1' if all(os.path.isdir(s) for s in sources) else '0'


@dataclass
class RunPlan:
    """What a run trains, decided before any weight is loaded."""

    run_dir: str
    run: dict
    p: dict
    objective: str
    model_src: str
    what: str
    tokenizer: object
    rows: list
    data_file: str
    other_file: object  # the version's file this objective leaves unread (None when it has none)
    steps: int
    processes: int
    rank: int

    @property
    def state_dir(self):
        return os.path.join(self.run_dir, STATE_DIR)

    @property
    def draw_count(self):
        """Every sequence the run trains on: batchSize x gradAccum x processes a step."""
        return self.steps * self.p['batchSize'] * self.p['gradAccum'] * self.processes

    def dataset(self):
        """Every sequence the run trains on, in order."""
        return drawn_dataset(self.rows, self.draw_count, self.run['seed'], self.data_file)

    def record(self):
        """What it trains on (data_record.py), for DIR/training-data.json."""
        picks = draws(self.rows, self.draw_count, self.run['seed'], self.data_file) if self.draw_count else []
        return data_record(self.objective, self.data_file, self.rows, picks, self.other_file)


def plan_run(run_dir, user_offline=None):
    run = read_run_json(run_dir)
    p = resolve_params(run['params'])
    model_src, tok_src, what = start_sources(run_dir, run, p)
    set_hub_access([model_src, tok_src], user_offline)
    if os.environ.get('FLYWHEEL_TORCH_THREADS'):
        import torch

        torch.set_num_threads(int(os.environ['FLYWHEEL_TORCH_THREADS']))
    processes, rank = int(os.environ.get('WORLD_SIZE', '1')), int(os.environ.get('RANK', '0'))
    pairs_file = dataset_file(run_dir, run['dataset'], 'pairsFile')
    examples_file = dataset_file(run_dir, run['dataset'], 'examplesFile')
    objective = objective_of(p, pairs_file)
    tokenizer = load_tokenizer(tok_src)
    pair_rows = read_pair_rows(pairs_file, tokenizer) if pairs_file and objective in ('dpo', 'auto') else None
    sft_rows = None
    if objective in ('sft', 'auto'):
        if not examples_file and objective == 'sft':
            raise TrainerError('run.json: the hf trainer trains on dataset.examplesFile (train.jsonl); this dataset version has none')
        sft_rows = read_sft_rows(examples_file, tokenizer, p['maxLength']) if examples_file else []
    if objective == 'auto':
        objective = auto_objective(sft_rows, pair_rows, examples_file, pairs_file)
    if objective == 'dpo':
        rows, data_file, other_file = pair_rows, pairs_file, examples_file
    else:
        if not examples_file:
            raise TrainerError('run.json: the hf trainer trains on dataset.examplesFile (train.jsonl); this dataset version has none')
        rows, data_file, other_file = sft_rows, examples_file, pairs_file
    steps = total_steps(p, len(rows), processes)
    return RunPlan(run_dir, run, p, objective, model_src, what, tokenizer, rows, data_file, other_file, steps, processes, rank)


def train(run_dir, user_offline=None):
    plan = plan_run(run_dir, user_offline)
    listed = newest_listed_step(run_dir)
    if listed is not None and listed >= plan.steps:
        return  # already finished: a relaunch after the last checkpoint is a no-op
    if plan.rank == 0:
        remove_stale_temp_folders(run_dir)
        write_data_record(run_dir, plan.record())
    if plan.steps == 0:
        if plan.rank == 0:
            model = load_model(plan.model_src, plan.what)
            publish_checkpoint(run_dir, 0, lambda tmp: (model.save_pretrained(tmp), plan.tokenizer.save_pretrained(tmp)))
        return
    resume = os.path.join(plan.state_dir, f'checkpoint-{listed}') if listed else None
    if resume and not os.path.isfile(os.path.join(resume, 'trainer_state.json')):
        raise TrainerError(f'checkpoint {listed} is listed but its resume state {resume} is missing')
    trainer = build_trainer(plan, plan.dataset())
    trainer.train(resume_from_checkpoint=resume)
    if trainer.is_world_process_zero():
        shutil.rmtree(plan.state_dir, ignore_errors=True)  # finished: nothing will resume, and it is the weights twice over


def use_bf16(p):
    import torch

    if p['precision'] != 'auto':
        return p['precision'] == 'bf16'
    return torch.cuda.is_available() and torch.cuda.is_bf16_supported()


def build_trainer(plan, dataset):
    """The TRL trainer for the run, with the metrics and export callbacks (the tests and benches build it too)."""
    run_dir, run, p, objective, tokenizer = plan.run_dir, plan.run, plan.p, plan.objective, plan.tokenizer
    model_src, what, steps, state_dir, processes = plan.model_src, plan.what, plan.steps, plan.state_dir, plan.processes
    import torch
    from transformers import PrinterCallback

    from callbacks import ExportCallback, FinalSaveWeightsOnly, MetricsCallback, last_metric_step
    from throughput import peak_flops

    model = load_model(model_src, what)
    peft_config = None
    if p['lora']:
        from peft import LoraConfig

        lo = p['lora']
        peft_config = LoraConfig(r=lo['r'], lora_alpha=lo['alpha'], target_modules=lo['targetModules'],
                                 lora_dropout=lo['dropout'], task_type='CAUSAL_LM')
    common = trl_arguments(p, run, state_dir, steps, run['checkpointEvery'], use_bf16(p), not torch.cuda.is_available())
    device = torch.device('cuda', int(os.environ.get('LOCAL_RANK', '0'))) if torch.cuda.is_available() else torch.device('cpu')
    n = model.num_parameters()
    # Training FLOPs per token (Kaplan's 6N, attention left out): 2N forward and 4N backward, of which a LoRA run
    # skips the 2N of frozen weight gradients; DPO adds the reference model's 2N forward.
    flops_per_token = (4 if p['lora'] else 6) * n + (2 * n if objective == 'dpo' else 0)
    metrics = MetricsCallback(run_dir, last_metric_step(os.path.join(run_dir, METRICS_FILE)), flops_per_token, peak_flops(device), processes)

    def export(step):
        publish_checkpoint(run_dir, step, lambda tmp: write_frozen(os.path.join(state_dir, f'checkpoint-{step}'), tmp, p, model_src, what, tokenizer))

    callbacks = [metrics, FinalSaveWeightsOnly(), ExportCallback(export)]
    if objective == 'dpo':
        from trl import DPOConfig

        from pretokenized_dpo import PretokenizedDPOTrainer

        losses = {'loss_type': ['sigmoid', 'sft'], 'loss_weights': [1.0, p['dpoSftWeight']]} if p['dpoSftWeight'] > 0 else {}
        config = DPOConfig(**common, beta=p['dpoBeta'], **losses)
        trainer = PretokenizedDPOTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer, peft_config=peft_config, callbacks=callbacks)
    else:
        from trl import SFTConfig

        from example_loss import PerExampleSFTTrainer

        config = SFTConfig(**common, completion_only_loss=True, packing=False)
        trainer = PerExampleSFTTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer, peft_config=peft_config, callbacks=callbacks)
    trainer.remove_callback(PrinterCallback)  # it prints every log dict; metrics.jsonl has what matters
    return trainer


def write_frozen(state, tmp, p, model_src, what, tokenizer):
    """The frozen folder of TRL's checkpoint `state`: its weights and configs as they are (full fine-tuning), or the
    starting model with the adapter merged in (LoRA), and the tokenizer; never the optimizer or other pickles."""
    if p['lora']:
        from peft import PeftModel

        merged = PeftModel.from_pretrained(load_model(model_src, what), state).merge_and_unload()
        merged.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        return
    for name in sorted(os.listdir(state)):
        if name in NOT_FROZEN or name.startswith('rng_state') or not os.path.isfile(os.path.join(state, name)):
            continue
        shutil.copy2(os.path.join(state, name), os.path.join(tmp, name))
