"""TRL's DPOTrainer on pairs the HF trainer has already tokenized (training_data.py `read_pair_rows`): TRL's own
preparation tokenizes prompt + answer as one string, and its SFT trainer skips a tokenized dataset but its DPO trainer
does not, so this one step is overridden."""
from trl import DPOTrainer


class PretokenizedDPOTrainer(DPOTrainer):
    def _prepare_dataset(self, dataset, processing_class, args, dataset_name):
        if 'prompt_ids' in dataset.column_names:
            return dataset
        return super()._prepare_dataset(dataset, processing_class, args, dataset_name)
