// What the metrics a trainer logs in metrics.jsonl are measured in, as the job contract states them for the shipped
// trainers (core/job-contract.ts `MetricLine`): the built-in and the reference PyTorch trainers log `loss` in bits
// per byte (byte-level models), the Hugging Face trainer in nats per completion token (SFT; a DPO run logs the DPO
// loss under the same name). A trainer of one's own states nothing: its metrics are labelled by name alone, never
// with a unit Flywheel guessed. Pure.
const COMMON: Record<string, string> = {
  lr: 'learning rate',
  tokens: 'tokens seen',
  tokens_per_s: 'tokens per second',
  mfu: 'fraction of peak FLOP/s',
};

/** The unit of each metric, by the trainer that logs it. */
export const TRAINER_METRIC_UNITS: Record<'builtin' | 'torch' | 'hf', Record<string, string>> = {
  builtin: { ...COMMON, loss: 'bits per byte' },
  torch: { ...COMMON, loss: 'bits per byte' },
  hf: { ...COMMON, loss: 'nats per token', reward_margin: 'nats', reward_accuracy: 'fraction of pairs' },
};

/** The shipped trainer a spec's `trainer.command` names (the PyTorch one by its script), or undefined. */
export function shippedTrainer(command: unknown): keyof typeof TRAINER_METRIC_UNITS | undefined {
  if (command === undefined || command === null || command === 'builtin') return 'builtin';
  if (command === 'hf') return 'hf';
  if (Array.isArray(command) && command.some((a) => typeof a === 'string' && /(^|\/)trainers\/torch\/main\.py$/.test(a))) return 'torch';
  return undefined;
}

/**
 * `metric (unit)` where the trainer's unit is known, else the metric's name; an HF run whose objective is DPO logs
 * the DPO loss as `loss`, which has no per-token unit.
 */
export function metricLabel(command: unknown, metric: string, opts: { objective?: unknown } = {}): string {
  const trainer = shippedTrainer(command);
  if (trainer === 'hf' && metric === 'loss' && opts.objective === 'dpo') return 'loss (DPO loss)';
  const unit = trainer ? TRAINER_METRIC_UNITS[trainer][metric] : undefined;
  return unit ? `${metric} (${unit})` : metric;
}
