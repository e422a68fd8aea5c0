// The campaign spec: what a researcher writes (YAML or JSON), validated with zod.
// Every field carries its meaning and default beside its schema; `parseSpec` is the one place a spec is checked.
import { z } from 'zod';
import { SIGNAL_BUILDERS } from './dataset/example-line';
import { higherIsBetter } from './eval-suite/suite-metrics';
import { gateSettingsSchema } from './gate/settings';
import { NO_PRUNER, prunerNames, prunerProblems } from './pruning';
import { samplerNames, samplerProblems } from './sampler/registry';
import { InvalidSpecError, formatIssues } from './spec-errors';
import { declaredEnvironmentProblems } from './trainer-environment';
import { resourceLimitsSchema } from './resource-limits';
import { HISTORY_COUNT_LIMIT, MAX_PARALLELISM, maxInlineBatch } from './temporal-limits';

/** A float knob; `log: true` samples on a log scale. */
const floatParam = z.strictObject({
  type: z.literal('float'),
  low: z.number(),
  high: z.number(),
  /** @default false */
  log: z.boolean().default(false),
});
/** An integer knob, inclusive bounds. */
const intParam = z.strictObject({
  type: z.literal('int'),
  low: z.number().int(),
  high: z.number().int(),
  /** @default false */
  log: z.boolean().default(false),
});
/** A choice among listed values. */
const categoricalParam = z.strictObject({
  type: z.literal('categorical'),
  choices: z.array(z.union([z.string(), z.number(), z.boolean()])).min(1, 'must list at least one choice'),
});

export const paramSchema = z.discriminatedUnion('type', [floatParam, intParam, categoricalParam]).superRefine((p, ctx) => {
  if (p.type !== 'categorical') {
    if (p.high < p.low) ctx.addIssue({ code: 'custom', message: 'high must be at least low', path: ['high'] });
    if (p.log && p.low <= 0) ctx.addIssue({ code: 'custom', message: 'must be positive on a log scale', path: ['low'] });
  }
});

export const searchSpaceSchema = z
  .record(z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/, 'knob names are identifiers'), paramSchema)
  .refine((s) => Object.keys(s).length > 0, 'must define at least one knob');

const trainerSchema = z.strictObject({
  /**
   * The trainer program, as an argv array (never a shell string). `builtin` is the TypeScript
   * char-level code model in trainers/charlm. `hf` is the Hugging Face Transformers/TRL trainer in trainers/hf
   * (`params.model`: a hub id or a local folder), run on the worker with the hf-venv's interpreter under
   * FLYWHEEL_HOME (`flywheel setup hf`; `FLYWHEEL_HF_PYTHON` overrides it): its checkpoints are hf-causal-lm-v1
   * folders that Flywheel scores itself, so `bits_per_byte` is a metric for it as for `builtin`.
   * @default "builtin"
   */
  command: z.union([z.literal('builtin'), z.literal('hf'), z.array(z.string().min(1)).min(1)]).default('builtin'),
  /** Parameters passed to every run beside the searched ones (in run.json). @default {} */
  fixed: z.record(z.string(), z.unknown()).default({}),
  /**
   * Environment variables set for `train` and `predict`, as literal values, beside the sandbox's allow-list (PATH,
   * HOME, locale, thread counts, CUDA/NCCL). A Flywheel or agent secret's name is refused (backends/sandbox).
   * @default {}
   */
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'), z.string()).default({}),
  /** Names of the worker's environment variables passed through to the trainer (a token of your own, say). @default [] */
  passEnv: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')).default([]),
  /**
   * Absolute paths the trainer may read besides its run directory, dataset version, base checkpoint, interpreter and
   * the folders of the files its argv names (a code checkout, a model cache). Never a path under FLYWHEEL_HOME.
   * @default []
   */
  readOnlyPaths: z.array(z.string().regex(/^\//, 'must be an absolute path')).default([]),
  /** Whether the sandbox keeps the host's network (to download weights, stream to a tracker). @default false */
  network: z.boolean().default(false),
  /**
   * Run the trainer without the filesystem and network sandbox, where the host cannot make one (no bubblewrap, no
   * user namespaces). The environment allow-list still applies; reports and the dashboard show the campaign as
   * unsandboxed. @default false
   */
  unsandboxed: z.boolean().default(false),
  /**
   * Whether `predict` speaks the warm protocol (`predict --serve`, core/job-contract.ts `PredictRequest`): the eval
   * worker then starts it once per campaign, in the same sandbox, and sends it every public split to answer instead of
   * starting a process per checkpoint. Held-out and probe prompts always go to a fresh process that answers nothing
   * else (docs/backends.md "Warm predict"). The built-in and `hf` trainers speak it. @default true for `builtin` and
   * `hf`, false for a command of one's own
   */
  warmPredict: z.boolean().optional(),
  /**
   * Whether `train` speaks the warm protocol (`train --serve`, core/job-contract.ts `TrainRequest`): the training
   * worker then keeps sandboxed trainer processes per campaign, trainer, dataset and warm start, and sends each a run
   * at a time instead of starting a process per run (docs/scale.md "Warm trainers"). A run's outputs are copied out of
   * the server's folder when it ends; a cancel, a prune, a limit or a time-out kills the server. A trainer that keeps
   * state between runs makes a result depend on what ran before it in that process: the gate's seed reruns always
   * start a fresh one. Only on the local backend, and not with `trainer.recipe` (a kept commit's confirmation reruns
   * must start fresh). The built-in trainer speaks it. @default false
   */
  warmTrain: z.boolean().optional(),
  /**
   * What `train` and `predict` may use (core/resource-limits.ts): resident memory, processes and threads, open files,
   * bytes and files left in the run directory, log bytes, predict's wall time. A run past one ends with the limit
   * named as its reason. @default memoryMb 8192, processes 512, openFiles 4096, diskMb 20480, files 100000, logMb 64,
   * predictSeconds 300
   */
  limits: resourceLimitsSchema.optional(),
  /**
   * The trainer's source as a versioned recipe (docs/recipes.md): Flywheel imports the folder into a git repository
   * it owns (FLYWHEEL_HOME/recipes/<campaign>.git), the campaign version pins the commit, and experiments may patch the
   * `mutable` files. `{recipe}` in `command` names the commit's files, read-only. @default none: the command as written
   */
  recipe: z
    .strictObject({
      /** The recipe folder (absolute, or relative to the directory registration runs in). */
      path: z.string().min(1),
      /** The files, relative to `path`, a patch may change. */
      mutable: z
        .array(
          z
            .string()
            .min(1)
            .regex(/^(?!\/)(?!.*(^|\/)\.\.(\/|$))/, 'must be a path inside the recipe'),
        )
        .min(1),
      /** Extra seeds a promising patch is rerun with before it is kept. @default 0 */
      confirmSeeds: z.number().int().min(0).default(0),
      /** The largest patch accepted, in bytes of unified diff. @default 20000 */
      maxPatchBytes: z.number().int().min(1).default(20000),
      /** The pinned commit (40 hex): filled in at registration from the folder; one the repository has is kept. */
      commit: z
        .string()
        .regex(/^[0-9a-f]{40}$/, 'must be a 40-hex git commit')
        .optional(),
    })
    .optional(),
});

/** What each training job asks Slurm for (`backend.kind: slurm`). Unset fields take the cluster's defaults. */
const slurmResourcesSchema = z.strictObject({
  /** Nodes per job (`--nodes`); with more than one, the trainer starts its own tasks (srun, torchrun). @default 1 */
  nodes: z.number().int().min(1).default(1),
  /** GPUs per node (`--gres=gpu:N`); 0 asks for none. @default 0 */
  gpusPerNode: z.number().int().min(0).default(0),
  /** CPUs for the trainer (`--cpus-per-task`). @default 1 */
  cpusPerTask: z.number().int().min(1).default(1),
  /** Memory per node in MB (`--mem`). @default the partition's default */
  memMb: z.number().int().min(1).optional(),
  /** Slurm's wall-clock limit (`--time`); a job past it is recorded as `timed_out`. @default the partition's limit */
  timeLimitMinutes: z.number().int().min(1).optional(),
  /** `--partition`. @default the cluster's default partition */
  partition: z.string().min(1).optional(),
  /** `--account`. @default the user's default account */
  account: z.string().min(1).optional(),
});

/** What each training job asks Ray for (`backend.kind: ray`): one Ray job per run, through the Jobs HTTP API. */
const rayResourcesSchema = z.strictObject({
  /** The Jobs API, i.e. the head's dashboard. @default $RAY_ADDRESS, else "http://127.0.0.1:8265" */
  address: z.string().min(1).optional(),
  /** CPUs Ray reserves for the trainer (`entrypoint_num_cpus`; fractions allowed). @default 1 */
  numCpus: z.number().min(0).default(1),
  /** GPUs Ray reserves for the trainer (`entrypoint_num_gpus`). @default 0 */
  numGpus: z.number().min(0).default(0),
  /** Ray's `runtime_env` for the job, passed as is (`env_vars`, `pip`, `conda`, …). @default none (the nodes' own environment) */
  runtimeEnv: z.record(z.string(), z.unknown()).optional(),
});

/** How each training run becomes a Kubernetes Job (`backend.kind: kubernetes`); read only for that kind. */
const kubernetesSchema = z.strictObject({
  /** Namespace of the Jobs; the training worker's service account needs the Role in backends/kubernetes/deploy there. @default "default" */
  namespace: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS label (lowercase letters, digits, dashes)')
    .default('default'),
  /** The container image holding the trainer (and Node/Python for it). Required when `kind` is `kubernetes`. */
  image: z.string().min(1).optional(),
  /** The pod's service account. @default the namespace's default */
  serviceAccount: z.string().min(1).optional(),
  /** The PVC holding FLYWHEEL_HOME (run dirs, datasets), mounted into the pod. Unset: the trainer syncs through `objectStoreUri`. */
  pvcName: z.string().min(1).optional(),
  /**
   * Where the PVC is mounted in the pod: `workerPath` (the worker's FLYWHEEL_HOME) appears at `podPath`, and paths
   * in the trainer's argv under it are rewritten (run.json's dataset and checkpoint paths are not: keep them equal
   * unless the trainer maps them itself). @default the worker's FLYWHEEL_HOME, the same path in the pod
   */
  runDirMount: z.strictObject({ workerPath: z.string().startsWith('/'), podPath: z.string().startsWith('/') }).optional(),
  /** Without a PVC: a bucket prefix; the pod gets `FLYWHEEL_RUN_URI=<prefix>/<run dir name>` and syncs there itself. */
  objectStoreUri: z.string().min(1).optional(),
  /** CPU request and limit, as Kubernetes quantities ("4", "500m"). @default none (the namespace's LimitRange) */
  cpu: z.union([z.string().min(1), z.number().positive()]).optional(),
  /** Memory request and limit ("16Gi"). @default none (the namespace's LimitRange) */
  memory: z.string().min(1).optional(),
  /** `nvidia.com/gpu` limit per pod; 0 asks for none. @default 0 */
  gpus: z.number().int().min(0).default(0),
  /** The pod's nodeSelector. @default {} */
  nodeSelector: z.record(z.string(), z.string()).default({}),
  /** The pod's tolerations, as Kubernetes writes them. @default [] */
  tolerations: z
    .array(
      z.strictObject({
        key: z.string().optional(),
        operator: z.enum(['Exists', 'Equal']).optional(),
        value: z.string().optional(),
        effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
        tolerationSeconds: z.number().int().optional(),
      }),
    )
    .default([]),
  /** The Job's `activeDeadlineSeconds`; a Job past it is recorded as `timed_out`. @default innerLoop.trainingTimeoutSeconds */
  activeDeadlineSeconds: z.number().int().min(1).optional(),
  /** How long Kubernetes keeps a finished Job (its outcome is also recorded in the run dir). @default 86400 */
  ttlSecondsAfterFinished: z.number().int().min(0).default(86_400),
});

const backendSchema = z
  .strictObject({
    /**
     * Where training runs: `local` processes on the training worker's machine, `slurm` batch jobs submitted from it,
     * `ray` jobs on a Ray cluster (run dirs on a filesystem the Ray nodes share), or `kubernetes` Jobs created from
     * it. @default "local"
     */
    kind: z.enum(['local', 'slurm', 'ray', 'kubernetes']).default('local'),
    /** Jobs this campaign may hold at once on the backend. @default 2 */
    maxConcurrent: z.number().int().min(1).default(2),
    /** Slurm resources per job; read only when `kind` is `slurm`. @default {} (one node, one CPU, no GPU, the cluster's defaults) */
    slurm: slurmResourcesSchema.optional(),
    /** Ray resources per job; read only when `kind` is `ray`. @default {} (the local head, one CPU, no GPU, no runtime_env) */
    ray: rayResourcesSchema.optional(),
    /** The Kubernetes Job for each run; required (for `image`) when `kind` is `kubernetes`. */
    kubernetes: kubernetesSchema.optional(),
  })
  .superRefine((b, ctx) => {
    if (b.kind === 'kubernetes' && !b.kubernetes?.image) {
      ctx.addIssue({
        code: 'custom',
        path: ['kubernetes', 'image'],
        message: "is required when backend.kind is kubernetes (the trainer's container image)",
      });
    }
  });

/** What the campaign may spend, and the prices its ledger uses (`cost_ledger`; activities/cost). */
const costBudgetSchema = z.strictObject({
  /**
   * Hard cap on the campaign's spend in USD (GPU time plus agent tokens), checked before every training launch and
   * every agent call; reaching it refuses the launch and stops the inner loop (`stoppedBy: "budget"`).
   * @default none (no cap)
   */
  maxCostUsd: z.number().min(0).optional(),
  /**
   * USD per GPU-hour, by GPU type: `default` prices any type not listed.
   * @default { default: 2 }
   */
  gpuHourUsd: z
    .object({ default: z.number().min(0).default(2) })
    .catchall(z.number().min(0))
    .prefault({}),
  /** The GPU type the jobs run on (a key of `gpuHourUsd`). @default "default" */
  gpuType: z.string().min(1).default('default'),
  /**
   * GPUs one training job holds. @default `nodes × gpusPerNode` for `backend.kind: slurm` (must match it when both
   * are set), `ray.numGpus` for `ray`, `kubernetes.gpus` for `kubernetes`, 0 for `local` (a CPU job: no GPU cost, only its CPU-seconds are recorded)
   */
  gpusPerJob: z.number().int().min(0).optional(),
});

const pruningSchema = z.strictObject({
  /**
   * The pruner, by name (core/pruning.ts): `median` stops a run whose loss is worse than the median of finished runs
   * at the same step; `none` never prunes; or a pruner added with registerPruner. @default "median"
   */
  rule: z
    .string()
    .min(1)
    .refine((name) => name === NO_PRUNER || prunerNames().includes(name), {
      error: (i) => `unknown pruner "${String(i.input)}"; registered: ${prunerNames().join(', ')}`,
    })
    .default('median'),
  /** No run is pruned before this step. @default 100 */
  warmupSteps: z.number().int().min(0).default(100),
  /** Finished runs needed before the rule applies. @default 3 */
  minCompleted: z.number().int().min(1).default(3),
  /** The streamed metric the rule compares (lower is better). @default "loss" */
  metric: z.string().default('loss'),
  /** Options of a registered pruner that takes some (checked against its schema). @default none */
  options: z.record(z.string(), z.unknown()).optional(),
});

const budgetSchema = z.strictObject({
  /** Total experiments the inner loop may run. */
  experiments: z.number().int().min(1, 'must be at least 1').default(12),
  /** Experiments running at once, at most 1999 (each is a pending child workflow; core/temporal-limits.ts). @default 2 */
  parallelism: z
    .number()
    .int()
    .min(1, 'must be at least 1')
    .max(MAX_PARALLELISM, `must be at most ${MAX_PARALLELISM} (Temporal's 2,000 pending child workflows per loop, less the baseline)`)
    .default(2),
});

const innerLoopSchema = z.strictObject({
  budget: budgetSchema.prefault({}),
  /** Experiments proposed per batch. @default 4 */
  batchSize: z.number().int().min(1).default(4),
  /** Stop after this many batches without improving the best public score by `minDelta`. */
  plateau: z
    .strictObject({
      /** @default 3 */
      patience: z.number().int().min(1).default(3),
      /** @default 0.001 */
      minDelta: z.number().min(0).default(0.001),
    })
    .prefault({}),
  pruning: pruningSchema.prefault({}),
  /**
   * The sampler, by name (core/sampler/registry.ts): `tpe`, the model-based sampler; `random`, random search;
   * `grid`, grid search; or a sampler added with registerSampler. @default "tpe"
   */
  proposer: z
    .string()
    .min(1)
    // Checked with the field, so an unknown name is listed with the spec's other problems.
    .refine((name) => samplerNames().includes(name), {
      error: (i) => `unknown sampler "${String(i.input)}"; registered: ${samplerNames().join(', ')}`,
    })
    .default('tpe'),
  /**
   * Options of the sampler, checked against its schema: for `tpe` `candidates`, `priorWeight`, `multivariate`,
   * `bandwidth`; for `grid` `points` (values per numeric knob, 5 unless set) and `values` (explicit values by knob).
   * @default none (the sampler's own defaults)
   */
  samplerOptions: z.record(z.string(), z.unknown()).optional(),
  /** Random start-up trials before the sampler's model is used. @default 4 */
  startupTrials: z.number().int().min(0).default(4),
  /** Wait for a researcher's `approveProposal` update before each experiment runs. @default false */
  requireApproval: z.boolean().default(false),
  /** Seed for the proposer and every trainer. @default 1 */
  seed: z.number().int().default(1),
  /** Attempts for one experiment's training (a crashed trainer is relaunched, up to this many). @default 2 */
  maxTrainingAttempts: z.number().int().min(1).default(2),
  /** Wall-clock limit for one training run, in seconds. @default 600 */
  trainingTimeoutSeconds: z.number().int().min(1).default(600),
  /**
   * How the loop runs each experiment: `child`, a workflow of its own (its own history, page and id in the Temporal
   * UI); `inline`, a coroutine of the loop's workflow (the same activities and checks, without a page of its own;
   * about 0.7 of the machine's CPU per experiment and 0.44 of Temporal's: docs/scale.md, "Experiments inline").
   * Absent: `child`.
   */
  experimentWorkflows: z.enum(['child', 'inline']).optional(),
});

const selectionSchema = z.strictObject({
  /**
   * The public-split metric used to choose the best experiment: any metric the task's suite reports
   * (core/eval-suite/suite-metrics.ts: `pass_rate`, `exact_match`, `grader.<kind>`, `category.<name>`,
   * `bits_per_byte`); `flywheel validate` lists them.
   * @default "bits_per_byte" for the built-in task, "pass_rate" for a custom one
   */
  metric: z.string().min(1, 'must name a metric').default('bits_per_byte'),
  /** Whether lower or higher is better. @default "min" for bits_per_byte, "max" for every other metric */
  mode: z.enum(['min', 'max']).default('min'),
});

/** A registered dataset (`flywheel dataset add`): `NAME` or `NAME@<12 hex digits>`. */
export const DATASET_REF = /^[a-z0-9][a-z0-9._-]{0,62}(@[0-9a-f]{12})?$/;
/** A registered eval suite (`flywheel suite add`): `NAME` or `NAME@N`. */
export const SUITE_REF = /^[a-z0-9][a-z0-9._-]{0,62}(@[1-9][0-9]*)?$/;

/** A task's own program (`task.users`, `task.teacher`): its argv, a script named by its absolute path (docs/tasks.md). */
const taskCommandSchema = z.strictObject({
  command: z.array(z.string().min(1)).min(1, 'must name the program and its arguments, e.g. ["python3", "/abs/path/users.py"]'),
});

export const customTaskSchema = z.strictObject({
  /** A task of one's own: a registered dataset and eval suite. */
  kind: z.literal('custom'),
  /**
   * The base dataset (`flywheel dataset add`): `NAME@<version>`, or a bare `NAME`, pinned to its newest version when
   * the campaign version is registered (the pinned id is what the campaign version records).
   */
  dataset: z.string().regex(DATASET_REF, 'must be NAME or NAME@<version> of a dataset registered with `flywheel dataset add`'),
  /** The eval suite (`flywheel suite add`): `NAME@N`, or a bare `NAME`, pinned to its newest version likewise. */
  suite: z.string().regex(SUITE_REF, 'must be NAME or NAME@N of a suite registered with `flywheel suite add`'),
  /**
   * The task's simulated users, a program in any language (`flywheel simulate-users CAMPAIGN --task custom`): JSON
   * lines in, JSON lines out, sandboxed as trainers are (docs/tasks.md). No default: the task has no simulated users.
   */
  users: taskCommandSchema.optional(),
  /**
   * The task's teacher, a program in any language: it critiques the outer loop's failures (and may give each its
   * category) in place of the built-in token diff, over the same protocol. No default: `outerLoop.teacher` decides.
   */
  teacher: taskCommandSchema.optional(),
});

export type CustomTaskSpec = z.output<typeof customTaskSchema>;

/**
 * A spec's `task` blocks, by kind: `custom` (a task of one's own) here, and each task that builds its own suite adds
 * its block's type from tasks/<name>/spec.ts (declaration merging). core/ names no task: the `task` schema, a union
 * of the blocks, is assembled in tasks/task-spec.ts, which hands it to campaignSpecSchemaWith.
 */
export interface TaskSpecs {
  custom: CustomTaskSpec;
}
export type TaskSpec = TaskSpecs[keyof TaskSpecs];
/** The schema of what the campaign trains and is judged on (spec `task`): one of the registered tasks' blocks. */
export type TaskSpecSchema = z.ZodType<TaskSpec>;

const approvalSchema = z.strictObject({
  /** Wait for a researcher's `approvePromotion` update before promoting a candidate the gate passed. @default false */
  requireApproval: z.boolean().default(false),
  /** How long to wait for the researcher. @default 86400 (one day) */
  timeoutSeconds: z.number().int().min(1).default(86_400),
  /** What happens when nobody answers in time. @default "reject" */
  onTimeout: z.enum(['promote', 'reject']).default('reject'),
});

/**
 * Who critiques the outer loop's failures. With `model` set AND `OPENAI_API_KEY` or `OPENAI_BASE_URL` in the
 * worker's environment, an OpenAI-compatible chat model explains and weights each failure (the verified reference
 * stays the training target); otherwise the built-in teacher derives the critique mechanically.
 */
const teacherSchema = z.strictObject({
  /** The chat model's name at the endpoint (e.g. "gpt-4o-mini"). No default: absent means the built-in teacher. */
  model: z.string().min(1).optional(),
  /**
   * Most failures one critique step sends to the model (each step: the feedback sample, the eval-failure sample);
   * the rest get the built-in critique. Bounds the cost and the step's time inside its activity timeout.
   * @default 20
   */
  maxFailures: z.number().int().min(0).default(20),
  /**
   * A registered task whose own teacher critiques instead of the generic token diff (its Task's `teacher`,
   * core/task.ts; `arithmetic` names which column's carry a sum dropped), gives feedback prompts their category and verifies
   * revisions. A model, when configured, still writes the critiques; the task's teacher then stands in for the
   * built-in one (failures past `maxFailures`, unusable replies). No default: the generic built-in teacher.
   */
  task: z.string().min(1).optional(),
});

const outerLoopSchema = z.strictObject({
  /**
   * A production model exists and fewer new feedback events than this arrived since the last iteration: the
   * iteration is skipped (recorded with its reason) rather than spending a training budget on the same data.
   * @default 1
   */
  minNewFeedback: z.number().int().min(0).default(1),
  /** Most feedback failures critiqued per iteration (a seeded sample when there are more). @default 200 */
  feedbackSample: z.number().int().min(0).default(200),
  /** Most failed public-split eval items critiqued per iteration (they shape loss weights, never examples). @default 50 */
  evalFailureSample: z.number().int().min(0).default(50),
  /** Mixing weight per example source (`corpus`, `critique`); a source not named weighs 1. @default { critique: 2 } */
  mixWeights: z.record(z.string(), z.number().min(0)).default({ critique: 2 }),
  /**
   * A fixed share of what training draws (the examples' summed effective weight) per named source, e.g. `{ user: 0.75
   * }`: each dataset version's mix weights are set to realise it whatever each source's count, the sources not named
   * sharing the rest by `mixWeights` (core/dataset/source-shares.ts). Each share in [0, 1], together at most 1. No
   * default: the mix weights alone.
   */
  sourceShares: z
    .record(z.string(), z.number().min(0).max(1))
    .refine((s) => Object.values(s).reduce((a, b) => a + b, 0) <= 1 + 1e-9, 'the shares must sum to at most 1')
    .optional(),
  /**
   * Loss weights per category come from the production model's public-split scores per category: a category
   * whose loss is worse than the mean weighs more, clamped to [min, max].
   */
  lossWeights: z
    .strictObject({
      /** @default 0.5 */
      min: z.number().min(0).default(0.5),
      /** @default 2 */
      max: z.number().min(0).default(2),
    })
    .prefault({}),
  /**
   * Start every experiment of an iteration from the production checkpoint (continued training on the new dataset
   * version) instead of from scratch. The knobs that fix the model's shape are pinned to production's values.
   */
  warmStart: z
    .strictObject({
      /** @default true */
      enabled: z.boolean().default(true),
      /** Knobs pinned to the production experiment's values. @default ["context", "embed", "hidden"] (the built-in model's shape) */
      pinnedKnobs: z.array(z.string()).default(['context', 'embed', 'hidden']),
    })
    .prefault({}),
  /** The inner loop's budget in each outer iteration. @default the innerLoop budget */
  innerBudget: z
    .strictObject({
      experiments: z.number().int().min(1).optional(),
      parallelism: z.number().int().min(1).optional(),
    })
    .prefault({}),
  /** The teacher of the critique step. @default the built-in teacher, `maxFailures` 20 */
  teacher: teacherSchema.prefault({}),
  /**
   * Which training signals the iteration's dataset version derives from the teacher's critiques of user feedback
   * (core/dataset/signal-builders.ts; docs/outer-loop.md "Signals"), any of:
   * - `reference`: the verified correction (an edit's) as a weighted SFT target (source `critique`);
   * - `revision`: the production model answers again with the critique in its prompt (its `predict`, sandboxed, in
   *   the eval-failure critique step, so it needs a production model and `evalFailureSample` above 0); a revision the
   *   task's verifier (or the verified reference) accepts becomes an SFT target (source `revision`) and the chosen
   *   side of a pair over the original output. An unverified revision yields nothing;
   * - `critique`: (prompt, output) → the critique's text, so the model learns to critique (source `critic`);
   * - `pairs`: preference pairs (`pairs.jsonl`, run.json `dataset.pairsFile`) with the verified reference chosen and
   *   the real production output rejected (a trainer with DPO reads them).
   * `[]` derives nothing: the version is its parent's examples (continued training on the base data).
   * Eval-failure critiques never yield an example or a pair, whatever is chosen.
   * @default ["reference"]
   */
  signals: z
    .array(z.enum(SIGNAL_BUILDERS))
    .default(['reference'])
    .refine((s) => new Set(s).size === s.length, 'must not name a builder twice'),
  /** The promotion gate (core/gate/settings.ts) and the researcher's approval. */
  promotion: gateSettingsSchema.extend(approvalSchema.shape).prefault({}),
});

/** One agent role's chat model. */
const agentRoleSchema = z.strictObject({
  /** The model's name at the endpoint (e.g. "gpt-4o-mini"). No default: absent means the built-in role. */
  model: z.string().min(1).optional(),
});

/**
 * Research agents through an OpenAI-compatible endpoint (`OPENAI_BASE_URL`, `OPENAI_API_KEY` in the worker's
 * environment). A role with a `model` and an endpoint asks the model; otherwise the built-in role runs (the
 * sampler proposes, the analyst summarises mechanically). Every call is recorded in `agent_calls`.
 */
const agentsSchema = z.strictObject({
  /** Proposes each batch of the inner loop, with a hypothesis per experiment. @default the built-in sampler */
  proposer: agentRoleSchema.prefault({}),
  /** Writes a short account of each finished batch. @default the built-in analyst */
  analyst: agentRoleSchema.prefault({}),
  /**
   * Tokens (in + out) all of the campaign's agent calls may use; checked before each call. A proposer out of tokens
   * hands the batch to the built-in sampler. @default none (no cap; `budget.maxCostUsd` still applies)
   */
  maxTokens: z.number().int().min(0).optional(),
  /** USD per million tokens, for the cost estimate written to `cost_ledger`. @default { input: 0.15, output: 0.6 } */
  usdPerMillionTokens: z
    .strictObject({
      /** @default 0.15 */
      input: z.number().min(0).default(0.15),
      /** @default 0.6 */
      output: z.number().min(0).default(0.6),
    })
    .prefault({}),
  /** Consecutive agent batches without a new best before the sampler takes over alone. @default 2 */
  handOverAfter: z.number().int().min(1).default(2),
  /**
   * An agent proposal within this distance of a finished or pending experiment (unit-cube distance over the knobs,
   * scaled to [0, 1]; core/sampler isNearDuplicate) is dropped. @default 0.02
   */
  nearDuplicate: z.number().min(0).max(1).default(0.02),
});

const campaignObjectSchemaWith = (taskSchema: TaskSpecSchema) =>
  z.strictObject({
    /** Campaign id: lowercase letters, digits and dashes; the key of every row and workflow id. */
    name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'must be lowercase letters, digits and dashes'),
    /** What the campaign is for, in plain English (shown to agents and in reports). @default "" */
    goal: z.string().default(''),
    task: taskSchema.prefault({}),
    trainer: trainerSchema.prefault({}),
    backend: backendSchema.prefault({}),
    searchSpace: searchSpaceSchema,
    innerLoop: innerLoopSchema.prefault({}),
    selection: selectionSchema.prefault({}),
    outerLoop: outerLoopSchema.prefault({}),
    budget: costBudgetSchema.prefault({}),
    /** Research agents (proposer, analyst). @default none: the built-in sampler and analyst */
    agents: agentsSchema.prefault({}),
  });

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The defaults that depend on another field, filled before validation: `selection.metric` is `pass_rate` for a custom
 * task, `selection.mode` follows the metric (`min` for bits_per_byte, `max` otherwise), and a custom task's gate
 * metric (`outerLoop.promotion.metric`) is its selection metric. A built-in spec without them parses as before.
 */
function withMetricDefaults(raw: unknown): unknown {
  if (!isRecord(raw)) return raw;
  const selection = raw.selection ?? {};
  if (!isRecord(selection)) return raw;
  const custom = isRecord(raw.task) && raw.task.kind === 'custom';
  const metric = selection.metric ?? (custom ? 'pass_rate' : 'bits_per_byte');
  const out: Record<string, unknown> = {
    ...raw,
    selection: { ...selection, metric, mode: selection.mode ?? (typeof metric === 'string' && !higherIsBetter(metric) ? 'min' : 'max') },
  };
  const outer = raw.outerLoop ?? {};
  const promotion = isRecord(outer) ? (outer.promotion ?? {}) : undefined;
  if (custom && isRecord(outer) && isRecord(promotion) && promotion.metric === undefined)
    out.outerLoop = { ...outer, promotion: { ...promotion, metric } };
  return out;
}

/** The campaign spec's schema over the tasks' `task` blocks (tasks/task-spec.ts `campaignSpecSchema`). */
export const campaignSpecSchemaWith = (taskSchema: TaskSpecSchema) =>
  z.preprocess(withMetricDefaults, campaignObjectSchemaWith(taskSchema));
export type CampaignSpecSchema = ReturnType<typeof campaignSpecSchemaWith>;

export type CampaignSpec = z.output<ReturnType<typeof campaignObjectSchemaWith>>;
/** A campaign's `trainer.recipe` block (core/spec.ts), once parsed. */
export type RecipeSpec = NonNullable<CampaignSpec['trainer']['recipe']>;
export type CampaignSpecInput = z.input<ReturnType<typeof campaignObjectSchemaWith>>;
export type SearchSpace = z.output<typeof searchSpaceSchema>;
export type CostBudgetSpec = z.output<typeof costBudgetSchema>;
export type OuterLoopSpec = z.output<typeof outerLoopSchema>;
export type TeacherSpec = z.output<typeof teacherSchema>;
export type AgentsSpec = z.output<typeof agentsSchema>;
export type ParamDef = z.output<typeof paramSchema>;
export type ParamValue = string | number | boolean;
export type Params = Record<string, ParamValue>;

export { InvalidSpecError, SpecTooLargeError, formatIssues } from './spec-errors';

/**
 * Validates a parsed spec object against `schema` and fills in every default; throws InvalidSpecError. Callers use
 * tasks/task-spec.ts `parseSpec` (through services/task-registry.ts outside tasks/), whose schema knows the tasks.
 */
export function parseSpecWith(schema: CampaignSpecSchema, raw: unknown, where?: string): CampaignSpec {
  const result = schema.safeParse(raw);
  if (!result.success) throw new InvalidSpecError(formatIssues(result.error.issues), where);
  const spec = result.data;
  if (spec.innerLoop.budget.parallelism > spec.innerLoop.budget.experiments) {
    throw new InvalidSpecError(['innerLoop.budget.parallelism: must not exceed innerLoop.budget.experiments'], where);
  }
  const inlineBatch = spec.innerLoop.experimentWorkflows === 'inline' ? maxInlineBatch(spec.innerLoop.maxTrainingAttempts) : Infinity;
  if (spec.innerLoop.batchSize > inlineBatch) {
    throw new InvalidSpecError(
      [
        `innerLoop.batchSize: must be at most ${inlineBatch} with experimentWorkflows inline and maxTrainingAttempts ${spec.innerLoop.maxTrainingAttempts} (a batch's experiments write to the loop's one history, which Temporal ends at ${HISTORY_COUNT_LIMIT.toLocaleString('en')} events)`,
      ],
      where,
    );
  }
  const warmTrain = warmTrainProblems(spec);
  if (warmTrain.length > 0) throw new InvalidSpecError(warmTrain, where);
  const slurm = spec.backend.slurm;
  if (
    spec.backend.kind === 'slurm' &&
    slurm &&
    spec.budget.gpusPerJob !== undefined &&
    spec.budget.gpusPerJob !== slurm.nodes * slurm.gpusPerNode
  ) {
    throw new InvalidSpecError(
      [`budget.gpusPerJob: must equal backend.slurm.nodes × gpusPerNode (${slurm.nodes * slurm.gpusPerNode}) or be left out`],
      where,
    );
  }
  const pluginProblems = [
    ...samplerProblems(spec.innerLoop.proposer, spec.innerLoop.samplerOptions, spec.searchSpace),
    ...prunerProblems(spec.innerLoop.pruning),
  ];
  if (pluginProblems.length > 0) throw new InvalidSpecError(pluginProblems, where);
  const envProblems = declaredEnvironmentProblems(spec.trainer);
  if (envProblems.length > 0) throw new InvalidSpecError(envProblems, where);
  if (spec.outerLoop.signals.includes('revision') && spec.outerLoop.evalFailureSample === 0)
    throw new InvalidSpecError(
      ['outerLoop.signals: "revision" runs in the eval-failure critique step; outerLoop.evalFailureSample must be above 0'],
      where,
    );
  const { min, max } = spec.outerLoop.lossWeights;
  if (min > max) throw new InvalidSpecError([`outerLoop.lossWeights.min: must not exceed outerLoop.lossWeights.max (${max})`], where);
  return spec;
}

/** Where `trainer.warmTrain` cannot hold: a served run is the local backend's, and a recipe's reruns start fresh. */
function warmTrainProblems(spec: CampaignSpec): string[] {
  if (!spec.trainer.warmTrain) return [];
  if (spec.backend.kind !== 'local')
    return [`trainer.warmTrain: only the local backend keeps warm trainers (backend.kind is ${spec.backend.kind})`];
  if (spec.trainer.command === 'hf')
    return ['trainer.warmTrain: the hf trainer does not speak `train --serve` (the built-in trainer and a command of your own may)'];
  if (spec.trainer.recipe)
    return ['trainer.warmTrain: not with trainer.recipe (a kept commit is confirmed by reruns that must start from a fresh process)'];
  return [];
}

/** GPUs one training job of this campaign holds (see `budget.gpusPerJob`). */
export function gpusPerJob(spec: CampaignSpec): number {
  if (spec.budget.gpusPerJob !== undefined) return spec.budget.gpusPerJob;
  const { kind, slurm, ray, kubernetes } = spec.backend;
  if (kind === 'slurm' && slurm) return slurm.nodes * slurm.gpusPerNode;
  if (kind === 'ray' && ray) return ray.numGpus;
  if (kind === 'kubernetes' && kubernetes) return kubernetes.gpus;
  return 0;
}

/** USD per GPU-hour for the campaign's GPU type. */
export function gpuHourPrice(spec: CampaignSpec): number {
  const prices = spec.budget.gpuHourUsd;
  return prices[spec.budget.gpuType] ?? prices.default;
}
