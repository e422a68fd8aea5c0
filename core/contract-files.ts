// Every file name of the training-job contract and of a run's launch directory, in one place: the TypeScript code
// (backends, activities, the built-in trainer, tests) imports them from here, and the Python trainers import the
// same names from trainers/torch/contract_files.py, generated from this file by trainers/write-contract-files.ts
// (test/unit/contract-files.test.ts fails when the generated file is out of date).

// The run directory: the trainer's, bound into its sandbox.
/** What `train` reads (core/job-contract.ts RunJson). */
export const RUN_JSON = 'run.json';
/** What `train` appends, one MetricLine a line. */
export const METRICS_FILE = 'metrics.jsonl';
/** The folder the trainer writes its checkpoints into. */
export const CHECKPOINTS_DIR = 'checkpoints';
/** The checkpoints the trainer publishes (CheckpointManifest), replaced whole. */
export const MANIFEST_FILE = `${CHECKPOINTS_DIR}/manifest.json`;

// A dataset version's folder (run.json `dataset.path`).
/** Every example as one text, repeated by its weight (run.json `dataset.trainFile`). */
export const TRAIN_TEXT_FILE = 'train.txt';
/** One example a line (run.json `dataset.examplesFile`; core/dataset/example-line.ts TrainExample). */
export const TRAIN_EXAMPLES_FILE = 'train.jsonl';
/** Preference pairs, one a line (run.json `dataset.pairsFile`; core/dataset/example-line.ts TrainPair). */
export const TRAIN_PAIRS_FILE = 'pairs.jsonl';

// `predict`'s files, in the eval worker's scratch folder for one call.
/** The prompts given to `predict --prompts`, one PredictPrompt a line. */
export const PROMPTS_FILE = 'prompts.jsonl';
/** What `predict --out` writes, one Prediction a line. */
export const PREDICTIONS_FILE = 'predictions.jsonl';

// The launch directory, `<runDir>.launch` (backends/run-dir-files.ts): the launcher's records, never bound into the
// sandbox, so nothing the trainer writes can forge them.
/** What a run directory's launch directory is named after it. */
export const LAUNCH_DIR_SUFFIX = '.launch';
/** One line per launch of the run (awaitTraining counts them). */
export const LAUNCHES_LOG = 'launches.log';
/** The local launcher's pid (its process group). */
export const JOB_PID_FILE = 'job.pid';
/** Taken by the launch that starts the trainer, so two concurrent launches of one run start one process. */
export const LAUNCH_LOCK = 'launch.lock';
/** Seconds since the epoch when the trainer started and ended. */
export const STARTED_AT_FILE = 'started_at';
export const ENDED_AT_FILE = 'ended_at';
/** The trainer's own exit status, inside the local launcher's log pipeline. */
export const TRAINER_EXIT_FILE = 'trainer_exit';
/** The run's exit code, written last: its presence means the trainer has ended. */
export const EXIT_CODE_FILE = 'exit_code';
/** The trainer's captured output (capped at `trainer.limits.logMb` when limits are given). */
export const STDOUT_LOG = 'stdout.log';
export const STDERR_LOG = 'stderr.log';
/** A run a warm trainer served (`trainer.warmTrain`): its server's folder and the run's own folder in it (ServedRecord). */
export const SERVED_FILE = 'served.json';
/** Written by cancel(), so a run killed on purpose reads as cancelled rather than lost. */
export const CANCELLED_FILE = 'cancelled';
/** The limits the run was launched with (LaunchRequest.limits), for whichever worker watches it. */
export const LIMITS_FILE = 'limits.json';
/** The limit a run was ended for, written before the kill: a worker that reattaches reports the same. */
export const LIMIT_FILE = 'limit';
/** What the sandbox showed the trainer (activities/training/train-command.ts). */
export const ISOLATION_FILE = 'isolation.json';
