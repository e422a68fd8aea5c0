"""SFT's loss with a weight that means per example: each sequence's mean cross-entropy over its own completion
tokens (and the EOS after them), then the mean over the batch's sequences. TRL's own loss divides the sum over every
completion token of the batch by their count, so a sequence counts in proportion to its length and, drawn by
weight, an example's influence would grow with its length as well as its weight. Sequences are drawn in proportion to
their weight alone (training_data.py), so an example's share of the loss is its weight's share."""
from trl import SFTTrainer


def per_example_mean(log_probs, label_mask):
    """The mean over sequences (rows) that have a target of each row's mean negative log-probability over its targets."""
    counted = label_mask.sum(1)
    per_row = -(log_probs * label_mask).sum(1) / counted.clamp(min=1)
    return per_row[counted > 0].mean()


class PerExampleSFTTrainer(SFTTrainer):
    # The loss is a mean over the micro-batch's sequences: the Trainer divides it by the gradient accumulation steps,
    # and DDP averages it over processes (every micro-batch holds batchSize sequences), so a step's loss is the mean
    # over all its sequences.
    loss_is_scaled_for_ga = False

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        inputs['use_cache'] = False
        # TRL's fused head: per-token log-probabilities of the labels (0 where the label is -100) and their mask.
        outputs = model(**inputs, fused_lm_head=True)
        loss = per_example_mean(outputs.log_probs, outputs.label_mask)
        # TRL's entropy and token-accuracy logs are left out: metrics.jsonl carries the loss only.
        return (loss, outputs) if return_outputs else loss
