// The training-job contract shared by every trainer and every backend (see DESIGN.md).
// `train --run-dir DIR` reads DIR/run.json, appends DIR/metrics.jsonl, writes DIR/checkpoints/manifest.json.
// `predict --checkpoint FILE --prompts IN.jsonl --out OUT.jsonl` answers eval prompts from a frozen checkpoint.
// `predict --serve` (a trainer whose spec sets `trainer.warmPredict`) does the same for one request a line on stdin
// until stdin ends, so the eval worker starts it once and scores many public splits through it (PredictRequest).
// Optionally, `describe` prints one JSON line, `{"knobs": {"NAME": {"default": …, "meaning": "…"}, …}}` (a
// TrainerDescription), and exits 0: the knobs run.json `params` may hold, which `flywheel validate` and `flywheel run`
// check a spec's knob names against (core/knob-check.ts); a trainer without it has its knobs reported as not checked.
// Before an inner loop writes anything, the training worker checks that the trainer can start (checkTrainer): its
// program resolves on the worker's PATH, an interpreter's script exists, the sandbox can be made. Nothing is run.

/**
 * What `train` reads. Every inner loop first trains its **baseline**, the reference held-out scores are compared
 * with: experiment id `<inner loop>/baseline` (run id `…/baseline/r1`), `seed` = innerLoop.seed × 1000 − 1, and no
 * searched knob: for the built-in trainer `params` is its default architecture with `steps: 0` (the untrained model);
 * for a trainer of one's own it is `trainer.fixed` alone (`{}` when the spec fixes nothing), so the trainer's own
 * defaults apply: fix `steps: 0` (or its equivalent) and search `steps`, or the baseline is a trained model. A warm
 * started loop's baseline gets the base in `baseCheckpoint` (the built-in trainer also its knobs, with `steps: 0`).
 */
export interface RunJson {
  runId: string;
  experimentId: string;
  /** The recipe name (the built-in trainer's `charlm`, or a user's own). */
  recipe: string;
  /** Searched and fixed hyper-parameters, as data: never interpolated into a command line. */
  params: Record<string, unknown>;
  seed: number;
  dataset: {
    versionId: string;
    /** Folder of the dataset version; `train.txt` holds the training text (examples joined by the separator). */
    path: string;
    /** `<path>/train.txt`: every example as one text (prompt then completion), repeated by its weight, joined by "\n". */
    trainFile: string;
    /**
     * `<path>/train.jsonl`: one example a line, `{prompt, completion, category, weight, source}` or
     * `{messages, category, weight, source}` (core/dataset/example-line.ts `TrainExample`), `weight` already the
     * effective one (mix × the example's weight × its category's loss weight). A trainer that can masks the loss to
     * the completion, and `weight` is per example: an example's share of the loss is its weight's share of the
     * total, whatever its length. The built-in trainers and the Hugging Face trainer draw examples in proportion to
     * `weight` alone and average the loss first over each drawn example's own targets (its completion bytes or
     * tokens and its end), then uniformly over the drawn examples. Absent on versions written before it existed.
     */
    examplesFile?: string;
    /**
     * `<path>/pairs.jsonl`: preference pairs, one a line, `{prompt, chosen, rejected, category, weight, source,
     * lineage}` (core/dataset/example-line.ts `TrainPair`), the rejected side always a real production output. Only
     * on versions that carry pairs (the outer loop's `pairs` and `revision` signals); a trainer that does preference
     * training (the Hugging Face trainer's DPO) reads it, any other ignores it.
     */
    pairsFile?: string;
  };
  /** A checkpoint to start from, or null for a fresh model. */
  baseCheckpoint: string | null;
  /** Write a checkpoint every N steps (and at the end). */
  checkpointEvery: number;
}

/**
 * One line of metrics.jsonl. `step` is required; every other numeric field is a metric. Units, as the shipped
 * trainers log them (core/metric-units.ts, which the dashboard labels curves by): `loss` in bits per byte for the
 * built-in and the PyTorch trainers, in nats per completion token for `hf` (a DPO run: the DPO loss); `lr` the
 * learning rate; `tokens` the tokens trained on so far; `tokens_per_s`; `mfu` a fraction of peak FLOP/s. A trainer of
 * one's own states no unit: its curves are labelled by the metric's name alone.
 */
export interface MetricLine {
  step: number;
  [metric: string]: number;
}

export interface CheckpointEntry {
  /** Relative to the run directory: a file, or a folder (a Hugging Face model folder). */
  path: string;
  /** The file's sha256, or for a folder the digest over its files (services/checkpoint-manifest.ts `sha256Folder`). */
  sha256: string;
  /** For a folder: each file's sha256 by its '/'-separated path inside the folder, as the digest covers them. */
  files?: Record<string, string>;
  step: number;
  /** e.g. `charlm-v1`; tells the eval activity how to read it. */
  format: string;
}

export interface CheckpointManifest {
  checkpoints: CheckpointEntry[];
}

/** One line of the prompts file given to `predict`. */
export interface PredictPrompt {
  id: string;
  prompt: string;
  /** Longest completion wanted, in bytes. */
  maxBytes: number;
}

/** One line of the predictions file `predict` writes. */
export interface Prediction {
  id: string;
  completion: string;
}

/**
 * A Hugging Face causal LM as a folder that `from_pretrained` loads with no remote code: config.json, weights as
 * safetensors only (a LoRA run's adapter merged in), the tokenizer's files and generation_config.json. Written by
 * trainers/hf; read by Flywheel's own scorer (formats/hf/) and the completion server, never by code the trainee wrote.
 */
export const HF_CAUSAL_LM_FORMAT = 'hf-causal-lm-v1';

/**
 * One line on a warm `predict --serve`'s stdin: do what `predict --checkpoint <checkpoint> --prompts <prompts> --out
 * <out>` does, then answer with one PredictReply line on stdout. Requests come one at a time: the next is sent only
 * after the reply. Stdin's end means exit. A stdout line that is not the reply to the request in flight is ignored
 * (a library's stray print does not break the protocol).
 */
export interface PredictRequest {
  /** Echoed in the reply. */
  id: string;
  /** A checkpoint file or folder, read-only. */
  checkpoint: string;
  prompts: string;
  out: string;
}

/** The answer to one PredictRequest: `ok`, or the one-line reason it failed (the server keeps serving). */
export interface PredictReply {
  id: string;
  ok: boolean;
  error?: string;
}

/**
 * One line on a warm `train --serve`'s stdin (a trainer whose spec sets `trainer.warmTrain`): do what `train --run-dir
 * <runDir>` does, then answer with one TrainReply line on stdout. `runDir` is a fresh folder holding run.json, the
 * only folder of this run the server may write; it is copied out when the reply arrives (and then removed), so a write
 * after the copy reaches nothing recorded. Requests come one at a time; stdin's end means exit. In serve mode stdout is the protocol: a line
 * that is not the reply to the request in flight goes to the run's stdout log, and logging belongs on stderr. A
 * server that dies mid-run fails that run with its exit status.
 */
export interface TrainRequest {
  /** Echoed in the reply. */
  id: string;
  runDir: string;
}

/** The answer to one TrainRequest: `ok` (exit 0), or the one-line reason the run failed (the server keeps serving). */
export interface TrainReply {
  id: string;
  ok: boolean;
  error?: string;
}

// The contract's file names live with every other in core/contract-files.ts.
export { MANIFEST_FILE, METRICS_FILE, RUN_JSON } from './contract-files';

/** What a trainer's `describe` entry point prints (one JSON line on stdout). */
export interface TrainerDescription {
  /** Every knob run.json `params` may hold, with its default (absent: off unless given) and what it does. */
  knobs: Record<string, { default?: unknown; meaning?: string }>;
}
