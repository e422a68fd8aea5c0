// The Flywheel schema. Every row a workflow writes has a deterministic primary key derived from
// workflow ids (campaign, loop, experiment, attempt), so a retried activity upserts instead of duplicating.
import {
  bigint,
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import type { StoredIterationSummary } from '../contracts/outer-loop';
import type { JobHandle } from '../contracts/job-handle';
import type { RunVerdict } from '../contracts/training';
import type { SignalLineage } from '../core/dataset/example-line';
import type { SuiteSettings } from '../core/eval-suite/suite-schema';
import type { CampaignSpec, Params } from '../core/spec';
import type { TrainingSignal } from '../core/teacher/builtin-teacher';

const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow();

/**
 * A campaign's name-level state. `spec` and `specHash` copy its latest registered version (for listings and the
 * dashboard); a loop never reads them: it runs the immutable version it pinned (campaign_versions).
 */
export const campaigns = pgTable('campaigns', {
  id: text('id').primaryKey(),
  spec: jsonb('spec').$type<CampaignSpec>().notNull(),
  specHash: text('spec_hash').notNull(),
  /** The version registered last (`flywheel run`, `outer --spec`, `schedule create --spec`): what an unpinned outer loop runs. */
  latestVersionId: text('latest_version_id'),
  /** The checkpoint currently in production (promoted by the outer loop's gate). */
  productionCheckpointId: text('production_checkpoint_id'),
  createdAt: createdAt(),
});

/**
 * An immutable, content-addressed campaign spec: `<name>@<hash>`, the hash the first 12 hex digits of the sha256 of
 * the parsed spec's canonical JSON (keys sorted). Registering the same spec again finds the same row; an edited spec
 * is a new row, and a loop that pinned the old one never sees it.
 */
export const campaignVersions = pgTable(
  'campaign_versions',
  {
    id: text('id').primaryKey(),
    campaignId: text('campaign_id').notNull(),
    hash: text('hash').notNull(),
    /** The parsed spec (every default filled in). */
    spec: jsonb('spec').$type<CampaignSpec>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('campaign_versions_campaign_idx').on(t.campaignId, t.createdAt)],
);

export const datasets = pgTable('datasets', {
  id: text('id').primaryKey(),
  /** The campaign whose outer loop derives this dataset's versions; null for a dataset a user registered (`flywheel dataset add`). */
  campaignId: text('campaign_id'),
  name: text('name').notNull(),
  createdAt: createdAt(),
});

/** Immutable once written: a content hash over its examples, its parents, counts per source. */
export const datasetVersions = pgTable('dataset_versions', {
  id: text('id').primaryKey(),
  datasetId: text('dataset_id').notNull(),
  parentIds: jsonb('parent_ids').$type<string[]>().notNull().default([]),
  /** Directory holding the files a trainer reads through run.json. */
  path: text('path').notNull(),
  contentHash: text('content_hash').notNull(),
  countsBySource: jsonb('counts_by_source').$type<Record<string, number>>().notNull(),
  mixWeights: jsonb('mix_weights').$type<Record<string, number>>().notNull().default({}),
  lossWeights: jsonb('loss_weights').$type<Record<string, number>>().notNull().default({}),
  createdAt: createdAt(),
});

export const examples = pgTable(
  'examples',
  {
    datasetVersionId: text('dataset_version_id').notNull(),
    /** sha256 of the content: the same text twice in one version is one example. */
    contentHash: text('content_hash').notNull(),
    source: text('source').notNull(),
    /** The feedback event, critique or corpus file this example came from. */
    sourceRef: text('source_ref').notNull(),
    category: text('category').notNull().default('code'),
    /** The text the overlap and contamination checks read: prompt + completion, or the rendered messages (core/dataset/example-line.ts). */
    content: text('content').notNull(),
    /** The example as the trainer gets it (train.jsonl): a prompt and its completion, or chat messages; null on rows from before 0008 (prompt "", completion = content). */
    prompt: text('prompt'),
    completion: text('completion'),
    messages: jsonb('messages').$type<{ role: 'system' | 'user' | 'assistant'; content: string }[]>(),
    weight: doublePrecision('weight').notNull().default(1),
    /** The signal builder that derived it from a critique (`reference`, `revision`, `critique`); null for other examples and rows from before 0009. */
    builder: text('builder'),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.datasetVersionId, t.contentHash] })],
);

/**
 * A dataset version's preference pairs (its `pairs.jsonl`), from the `pairs` and `revision` signal builders.
 * `rejected` is always a real production output (the feedback event's); `source_ref` is the critique.
 */
export const trainPairs = pgTable(
  'train_pairs',
  {
    datasetVersionId: text('dataset_version_id').notNull(),
    /** sha256 of prompt, chosen and rejected (core/dataset/signal-builders.ts pairHashOf). */
    contentHash: text('content_hash').notNull(),
    source: text('source').notNull(),
    sourceRef: text('source_ref').notNull(),
    builder: text('builder').notNull(),
    category: text('category').notNull(),
    prompt: text('prompt').notNull(),
    chosen: text('chosen').notNull(),
    rejected: text('rejected').notNull(),
    weight: doublePrecision('weight').notNull().default(1),
    /** The feedback event, the critique and the builder (core/dataset/example-line.ts SignalLineage), as pairs.jsonl carries it. */
    lineage: jsonb('lineage').$type<SignalLineage>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.datasetVersionId, t.contentHash] })],
);

export const innerLoops = pgTable('inner_loops', {
  /** The innerLoop workflow id. */
  id: text('id').primaryKey(),
  campaignId: text('campaign_id').notNull(),
  /** The campaign version the loop runs (pinned at its start; null only on rows written outside a loop). */
  campaignVersionId: text('campaign_version_id'),
  datasetVersionId: text('dataset_version_id').notNull(),
  /** Every experiment starts from this checkpoint (the outer loop's warm start), or from scratch when null. */
  baseCheckpointId: text('base_checkpoint_id'),
  status: text('status').notNull(),
  bestExperimentId: text('best_experiment_id'),
  baselineExperimentId: text('baseline_experiment_id'),
  summary: jsonb('summary').$type<Record<string, unknown>>(),
  createdAt: createdAt(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export const experiments = pgTable(
  'experiments',
  {
    /** `${innerLoopId}/e${index}`: the experiment child workflow id. */
    id: text('id').primaryKey(),
    campaignId: text('campaign_id').notNull(),
    innerLoopId: text('inner_loop_id').notNull(),
    /** The campaign version its loop runs: its trainer, search space and backend (null only on rows written outside a loop). */
    campaignVersionId: text('campaign_version_id'),
    index: integer('index').notNull(),
    datasetVersionId: text('dataset_version_id').notNull(),
    params: jsonb('params').$type<Params>().notNull(),
    hypothesis: text('hypothesis').notNull().default(''),
    proposer: text('proposer').notNull(),
    /** proposed | running | succeeded | pruned | failed | cancelled */
    status: text('status').notNull(),
    publicScore: doublePrecision('public_score'),
    heldoutScore: doublePrecision('heldout_score'),
    bestCheckpointId: text('best_checkpoint_id'),
    error: text('error'),
    /** Seconds the experiment's training attempts waited for a capacity slot, summed over attempts. */
    capacityWaitSeconds: doublePrecision('capacity_wait_seconds'),
    /**
     * The recipe commit its trainer runs (a patch experiment's commit, services/recipes): null runs the campaign
     * version's pinned `trainer.recipe.commit`, or no recipe at all.
     */
    recipeCommit: text('recipe_commit'),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [
    index('experiments_loop_idx').on(t.innerLoopId),
    index('experiments_campaign_idx').on(t.campaignId),
    // The dashboard's leaderboard pages, best first in either selection mode, without sorting the whole loop.
    index('experiments_loop_rank_min_idx').on(t.innerLoopId, t.publicScore.asc().nullsLast(), t.index),
    index('experiments_loop_rank_max_idx').on(t.innerLoopId, t.publicScore.desc().nullsLast(), t.index),
  ],
);

export const trainingRuns = pgTable(
  'training_runs',
  {
    /** `${experimentId}/r${attempt}`: one row per launch attempt the workflow history records. */
    id: text('id').primaryKey(),
    experimentId: text('experiment_id').notNull(),
    attempt: integer('attempt').notNull(),
    backend: text('backend').notNull(),
    /** The backend's handle (pid, Slurm job id, ...), enough to reattach. */
    handle: jsonb('handle').$type<JobHandle>(),
    runDir: text('run_dir').notNull(),
    /** launched | running | succeeded | failed | pruned | cancelled | timed_out */
    status: text('status').notNull(),
    exitCode: integer('exit_code'),
    stderrTail: text('stderr_tail'),
    /** Seconds the trainer process itself ran (from its own start and end stamps). */
    trainerSeconds: doublePrecision('trainer_seconds'),
    launches: integer('launches').notNull().default(1),
    /** Seconds this run waited for its capacity slot before launching (null: launched without a slot). */
    capacityWaitSeconds: doublePrecision('capacity_wait_seconds'),
    /**
     * Flywheel's own decision to stop the job (RunVerdict: pruned, timed out, cancelled), written before the kill,
     * so an awaitTraining that reattaches after a lost completion reports it instead of "cancelled outside Flywheel".
     */
    verdict: jsonb('verdict').$type<RunVerdict>(),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
    endedAt: timestamp('ended_at', { withTimezone: true }),
  },
  (t) => [index('training_runs_experiment_idx').on(t.experimentId)],
);

export const metricPoints = pgTable(
  'metric_points',
  {
    runId: text('run_id').notNull(),
    name: text('name').notNull(),
    step: integer('step').notNull(),
    value: doublePrecision('value').notNull(),
    /** Byte offset of the line in metrics.jsonl, so replays are recognisable. */
    offset: bigint('offset', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.name, t.step] })],
);

export const checkpoints = pgTable('checkpoints', {
  /** `${runId}/step-${step}` */
  id: text('id').primaryKey(),
  runId: text('run_id').notNull(),
  experimentId: text('experiment_id').notNull(),
  step: integer('step').notNull(),
  path: text('path').notNull(),
  sha256: text('sha256').notNull(),
  format: text('format').notNull(),
  createdAt: createdAt(),
});

export const evalSuites = pgTable('eval_suites', {
  /** `${name}@${version}` */
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  version: integer('version').notNull(),
  contentHash: text('content_hash').notNull(),
  /** The judge rubric and other per-suite settings. */
  settings: jsonb('settings').$type<SuiteSettings>().notNull().default({}),
  createdAt: createdAt(),
});

export const evalItems = pgTable(
  'eval_items',
  {
    id: text('id').primaryKey(),
    suiteId: text('suite_id').notNull(),
    /** public | heldout | probe */
    split: text('split').notNull(),
    /** exact_token | bits_per_byte */
    grader: text('grader').notNull(),
    category: text('category').notNull().default('code'),
    prompt: text('prompt').notNull(),
    reference: text('reference').notNull(),
    contentHash: text('content_hash').notNull(),
    sourceFile: text('source_file').notNull(),
    /** The grader and its settings (core/graders `GraderConfig`); null means `{ kind: grader }`. */
    graderConfig: jsonb('grader_config').$type<Record<string, unknown>>(),
    /** On probe-split items: `{ kind: perturbed | paraphrased | canary | cheat_only, of?: public item id }`. */
    probe: jsonb('probe').$type<{ kind: string; of?: string }>(),
    /** The longest output `predict` is asked for on this item, in bytes; null: the grader's default. */
    maxBytes: integer('max_bytes'),
  },
  (t) => [index('eval_items_suite_split_idx').on(t.suiteId, t.split)],
);

export const evalResults = pgTable('eval_results', {
  /** `${checkpointId}|${suiteId}|${split}` */
  id: text('id').primaryKey(),
  checkpointId: text('checkpoint_id').notNull(),
  experimentId: text('experiment_id').notNull(),
  suiteId: text('suite_id').notNull(),
  split: text('split').notNull(),
  itemCount: integer('item_count').notNull(),
  metrics: jsonb('metrics').$type<Record<string, number>>().notNull(),
  /** Per-item outcomes (id → score); for the held-out split, ids and scores only. */
  perItem: jsonb('per_item').$type<Record<string, number>>().notNull(),
  /**
   * Items a grader could not score (`errors`: id → one line; never a pass), outputs holding a canary (`canaryHits`),
   * and outputs completing a held-out canary their prompt did not hold (`heldoutCanaryHits`). On the public split
   * only, each graded item's output as graded (`outputs`: id → text), for the predictions views; never on a
   * held-out, probe or test row. The dtype the loss items were scored in (`lossDtype`), when there were any: a
   * result scored in another dtype than the scorer's now is scored again (activities/eval/loss-scorers.ts).
   */
  details: jsonb('details')
    .$type<{
      errors?: Record<string, string>;
      canaryHits?: string[];
      heldoutCanaryHits?: string[];
      outputs?: Record<string, string>;
      lossDtype?: string;
    }>()
    .notNull()
    .default({}),
  createdAt: createdAt(),
});

export const heldoutReads = pgTable('heldout_reads', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  suiteId: text('suite_id').notNull(),
  /** The sealed split read: `heldout`, or `test` (read for reports only). */
  split: text('split').notNull().default('heldout'),
  reader: text('reader').notNull(),
  purpose: text('purpose').notNull(),
  readAt: timestamp('read_at', { withTimezone: true }).notNull().defaultNow(),
});

export const feedbackEvents = pgTable(
  'feedback_events',
  {
    /** The client's idempotency key. */
    id: text('id').primaryKey(),
    campaignId: text('campaign_id').notNull(),
    kind: text('kind').notNull(),
    modelVersion: text('model_version').notNull(),
    prompt: text('prompt').notNull(),
    output: text('output').notNull(),
    correction: text('correction'),
    rating: integer('rating'),
    comment: text('comment'),
    /**
     * The loss-weight category the client named (0011); null when it named none, and the outer loop then takes the
     * category of the prompt's nearest dataset example, else the task teacher's (core/dataset/feedback-shape.ts).
     */
    category: text('category'),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
    /**
     * The outer iteration that ingested this event (its watermark): set once, when the iteration claims every
     * event of the campaign not yet ingested, so each event feeds exactly one iteration.
     */
    ingestedBy: text('ingested_by'),
  },
  (t) => [index('feedback_events_campaign_ingested_idx').on(t.campaignId, t.ingestedBy)],
);

export const critiques = pgTable('critiques', {
  id: text('id').primaryKey(),
  campaignId: text('campaign_id').notNull(),
  /** The outer iteration that asked for it (null for critiques made outside the loop). */
  outerIterationId: text('outer_iteration_id'),
  sourceKind: text('source_kind').notNull(),
  sourceId: text('source_id').notNull(),
  teacher: text('teacher').notNull(),
  promptVersion: text('prompt_version').notNull(),
  text: text('text').notNull(),
  signal: jsonb('signal').$type<TrainingSignal[]>().notNull(),
  createdAt: createdAt(),
});

/**
 * The production model's second answer to a critiqued failure, with the critique in its prompt (the `revision`
 * signal builder), and whether it verified: by the task's verifier, the verified reference, or the eval item's grader.
 */
export const revisions = pgTable('revisions', {
  /** `<critique id>/revision` */
  id: text('id').primaryKey(),
  campaignId: text('campaign_id').notNull(),
  outerIterationId: text('outer_iteration_id'),
  critiqueId: text('critique_id').notNull(),
  /** The production checkpoint that answered. */
  checkpointId: text('checkpoint_id').notNull(),
  /** The prompt it answered: the critique, then the original prompt (core/teacher/revision-prompt.ts). */
  prompt: text('prompt').notNull(),
  output: text('output').notNull(),
  verified: boolean('verified').notNull(),
  /** How it was checked: `task:<name>`, `reference`, `grader:<kind>`, or `none` (nothing could check it). */
  verifiedBy: text('verified_by').notNull(),
  createdAt: createdAt(),
});

export const decisions = pgTable('decisions', {
  /** Deterministic: `${workflowId}/${kind}`. */
  id: text('id').primaryKey(),
  campaignId: text('campaign_id').notNull(),
  /** select | promote | reject | hold (a gate decision awaiting a researcher: `heldoutOutrun: hold`) */
  kind: text('kind').notNull(),
  checkpointId: text('checkpoint_id'),
  experimentId: text('experiment_id'),
  rule: text('rule').notNull(),
  reason: text('reason').notNull(),
  figures: jsonb('figures').$type<Record<string, unknown>>().notNull().default({}),
  accepted: boolean('accepted').notNull(),
  createdAt: createdAt(),
});

/** One outer iteration of a campaign: its claim on the feedback, what it built, and how it ended. */
export const outerIterations = pgTable(
  'outer_iterations',
  {
    /** `${campaignId}/outer/i${iteration}` for the first attempt, `…/i${iteration}-a${attempt}` for later ones. */
    id: text('id').primaryKey(),
    campaignId: text('campaign_id').notNull(),
    iteration: integer('iteration').notNull(),
    /** 1, then one more each time a failed or terminated attempt of the iteration is started again (its own ids). */
    attempt: integer('attempt').notNull().default(1),
    /** The outerLoop workflow that owns the attempt (a dead owner's attempt is ended, and the next start makes a new one). */
    workflowId: text('workflow_id').notNull(),
    /**
     * The owner's run id: a later start under the same workflow id (a schedule's, or a rerun of a failed one) is
     * another owner. Null on rows claimed before it was recorded (then the workflow id alone names the owner).
     */
    workflowRunId: text('workflow_run_id'),
    /** schedule | cli | ui | demo */
    trigger: text('trigger').notNull(),
    /** The campaign version the attempt runs: the outer loop's pinned one, else the campaign's latest at the claim. */
    campaignVersionId: text('campaign_version_id'),
    /** running | promoted | rejected | no-candidate | failed (summary.reason says why) */
    status: text('status').notNull(),
    /** The production checkpoint when the iteration began: the incumbent the gate compares against. */
    incumbentCheckpointId: text('incumbent_checkpoint_id'),
    /** Feedback events this iteration ingested, and the span of their arrival times. */
    newFeedback: integer('new_feedback').notNull().default(0),
    feedbackFrom: timestamp('feedback_from', { withTimezone: true }),
    feedbackTo: timestamp('feedback_to', { withTimezone: true }),
    datasetVersionId: text('dataset_version_id'),
    innerLoopId: text('inner_loop_id'),
    candidateCheckpointId: text('candidate_checkpoint_id'),
    decisionId: text('decision_id'),
    /** The iteration's summary (OuterIterationSummary, or FailedIterationSummary), written when it ends. */
    summary: jsonb('summary').$type<StoredIterationSummary>(),
    createdAt: createdAt(),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('outer_iterations_campaign_iteration_attempt_idx').on(t.campaignId, t.iteration, t.attempt)],
);

/**
 * The most training jobs a backend kind (a cluster) may hold at once, over every campaign. No row: no cluster
 * limit (only each campaign's `backend.maxConcurrent`). Read on every acquire, so a change applies at once.
 */
export const capacity = pgTable('capacity', {
  /** The backend kind: `local`, `slurm`. */
  backend: text('backend').primaryKey(),
  maxJobs: integer('max_jobs').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/** A held capacity slot: one row per training run (its id), deleted when the run ends or its holder is gone. */
export const capacitySlots = pgTable(
  'capacity_slots',
  {
    /** `${experimentId}/r${attempt}`: the run the slot is for, so a retried acquire finds its own grant. */
    runId: text('run_id').primaryKey(),
    experimentId: text('experiment_id').notNull(),
    campaignId: text('campaign_id').notNull(),
    backend: text('backend').notNull(),
    /** Seconds between the acquire being scheduled and the grant. */
    waitedSeconds: doublePrecision('waited_seconds').notNull(),
    acquiredAt: timestamp('acquired_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('capacity_slots_campaign_idx').on(t.campaignId), index('capacity_slots_backend_idx').on(t.backend)],
);

/** What a campaign spent: GPU-seconds of training runs and (from the agents) tokens, priced when recorded. */
export const costLedger = pgTable(
  'cost_ledger',
  {
    /** Deterministic per source: `${runId}/gpu` for a training run, `${callId}/tokens` for an agent call. */
    id: text('id').primaryKey(),
    campaignId: text('campaign_id').notNull(),
    /** gpu | tokens */
    kind: text('kind').notNull(),
    /** The training backend (gpu rows) or the model endpoint (token rows). */
    backend: text('backend'),
    gpuType: text('gpu_type'),
    /** GPU-seconds (gpu) or tokens (tokens). */
    quantity: doublePrecision('quantity').notNull(),
    /** USD per GPU-hour (gpu) or per token (tokens), as configured when the row was written. */
    unitPriceUsd: doublePrecision('unit_price_usd').notNull(),
    amountUsd: doublePrecision('amount_usd').notNull(),
    /** CPU-seconds of a training run (wall seconds × CPUs), for the record; not priced. */
    cpuSeconds: doublePrecision('cpu_seconds'),
    sourceId: text('source_id').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('cost_ledger_campaign_idx').on(t.campaignId)],
);

/**
 * One request to an agent's chat model (proposer, analyst, teacher): what was asked (role, prompt version, model),
 * what it cost, how long it took, the raw reply and what became of it. The id is the idempotency key
 * `${workflowId}/${activityId}/${callIndex}` (attempt-independent): a retried activity finds the row its earlier
 * attempt wrote and reuses the reply instead of asking (and paying) again. A request that got no reply (a 429, a
 * 5xx, a timeout, a cancel) is recorded under `${key}/attempt${n}`, once per real request.
 */
export const agentCalls = pgTable(
  'agent_calls',
  {
    id: text('id').primaryKey(),
    campaignId: text('campaign_id').notNull(),
    /** proposer | analyst | teacher */
    role: text('role').notNull(),
    /** The prompt file (agents/prompts/<version>.md). */
    promptVersion: text('prompt_version').notNull(),
    model: text('model').notNull(),
    tokensIn: integer('tokens_in').notNull().default(0),
    tokensOut: integer('tokens_out').notNull().default(0),
    costUsd: doublePrecision('cost_usd').notNull().default(0),
    latencyMs: integer('latency_ms').notNull(),
    /** The reply's message content (or the tool call's arguments), verbatim; null when there was no reply. */
    rawReply: text('raw_reply'),
    /** json_schema | tool: how structured output was requested. */
    mode: text('mode').notNull(),
    /** ok | rejected | unusable | error: rejected/unusable replies and errors carry `reason`. */
    outcome: text('outcome').notNull(),
    reason: text('reason'),
    createdAt: createdAt(),
  },
  (t) => [index('agent_calls_campaign_idx').on(t.campaignId)],
);

/** Which proposer made each batch of an inner loop, and why (the hybrid proposer's hand-over record). */
export const proposalBatches = pgTable('proposal_batches', {
  /** `${innerLoopId}/b${startIndex}` */
  id: text('id').primaryKey(),
  innerLoopId: text('inner_loop_id').notNull(),
  startIndex: integer('start_index').notNull(),
  /** agent | sampler */
  mode: text('mode').notNull(),
  /** Why this mode, and what the agent's proposals became (kept, rejected, ranked out), in plain English. */
  note: text('note').notNull(),
  createdAt: createdAt(),
});

/** The analyst's plain-English account of one finished batch (shown by `flywheel status` and reports). */
export const analyses = pgTable('analyses', {
  /** `${innerLoopId}/a${startIndex}` */
  id: text('id').primaryKey(),
  campaignId: text('campaign_id').notNull(),
  innerLoopId: text('inner_loop_id').notNull(),
  startIndex: integer('start_index').notNull(),
  /** The model's name, or `builtin`. */
  author: text('author').notNull(),
  promptVersion: text('prompt_version').notNull(),
  text: text('text').notNull(),
  /** The agent_calls row behind it, when a model wrote it. */
  callId: text('call_id'),
  createdAt: createdAt(),
});

/**
 * A campaign's recipe history (services/recipes): every commit of its recipe repository Flywheel made or imported, its
 * parent, where it came from, and, once a patch experiment won, when it was kept and with what public score.
 */
export const recipeCommits = pgTable(
  'recipe_commits',
  {
    campaignId: text('campaign_id').notNull(),
    /** The git commit sha (40 hex) in FLYWHEEL_HOME/recipes/<campaign>.git. */
    commit: text('commit').notNull(),
    /** The commit it was written against; null for an imported folder. */
    parent: text('parent'),
    /** import | patch */
    origin: text('origin').notNull(),
    /** The patch experiment whose result kept it. */
    experimentId: text('experiment_id'),
    /** When it became the campaign's best recipe; null while it is only a tried commit. */
    keptAt: timestamp('kept_at', { withTimezone: true }),
    keptScore: doublePrecision('kept_score'),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.campaignId, t.commit] }), index('recipe_commits_kept_idx').on(t.campaignId, t.keptAt)],
);

/**
 * Every patch proposed for a campaign's recipe (by an agent or a researcher), accepted or not, with the rule that
 * refused it: the proposer's memory of what was tried, and the lineage's diff view.
 */
export const recipePatches = pgTable(
  'recipe_patches',
  {
    /** The caller's deterministic id (a loop, batch and proposal index), so a retried activity records it once. */
    id: text('id').primaryKey(),
    campaignId: text('campaign_id').notNull(),
    innerLoopId: text('inner_loop_id').notNull(),
    /** The experiment that runs it; null for a rejected or queued patch. */
    experimentId: text('experiment_id'),
    /** The commit it was written against. */
    baseCommit: text('base_commit').notNull(),
    /** The commit it made (an accepted patch). */
    commit: text('commit'),
    diff: text('diff').notNull(),
    /** sha256 of the normalised diff (core/patch-novelty.ts): a duplicate's fingerprint. */
    normalizedHash: text('normalized_hash').notNull(),
    /** `train.py +5 -1`, one entry per file. */
    summary: text('summary').notNull().default(''),
    /** `agent:<model>` | `researcher:<name>` */
    proposer: text('proposer').notNull(),
    hypothesis: text('hypothesis').notNull().default(''),
    /** A researcher's knob values for its experiment (`flywheel propose --params`), over the best's; null: the best's. */
    params: jsonb('params').$type<Params>(),
    /** accepted | rejected | queued */
    status: text('status').notNull(),
    /** Why it was rejected: one line naming the rule. */
    reason: text('reason'),
    createdAt: createdAt(),
  },
  (t) => [
    index('recipe_patches_campaign_idx').on(t.campaignId, t.createdAt),
    uniqueIndex('recipe_patches_loop_experiment_idx').on(t.innerLoopId, t.experimentId),
  ],
);
