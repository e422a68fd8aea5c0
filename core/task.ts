// The Task interface: everything the platform needs to know about a task, in one place. A task is what a campaign
// trains and is judged on (spec `task`); each one implements this in tasks/<name>/task.ts, a custom task (a registered
// dataset and suite, no code) gets the generic implementation tasks/custom/task.ts, and tasks/index.ts is the registry
// (taskByName, taskForSpec). No platform code outside tasks/ names a task: it asks the registry, through
// services/task-registry.ts. Pure types: no I/O.
import type { MetricItem } from './eval-suite/suite-metrics';
import type { ClusterBy } from './gate/item-layout';
import type { SuiteSettings } from './eval-suite/suite-schema';
import type { FeedbackEvent } from './feedback';
import type { SearchSpace, TaskSpec } from './spec';
import type { TaskReferenceTrainer } from './gate/reference-control';
import type { TaskTeacher } from './teacher/task-teacher';

/** How the campaign selects, when the spec does not say (`selection.metric` and `selection.mode`). */
export interface TaskSelection {
  metric: string;
  mode: 'min' | 'max';
}

/** One held-out figure a summary prints, untrained → winner. */
export interface SummaryMetric {
  metric: string;
  /** Printed after the figures, e.g. `bits/byte`. @default none */
  unit?: string;
  lowerIsBetter: boolean;
}

/** The suite a task builds itself, known before it is built (`flywheel validate` names its metrics without a database). */
export interface TaskSuiteShape {
  /** The suite's name in messages before it exists (its real id carries its content hash). */
  label: string;
  /** One public item per grader and category the suite can hold. */
  items(): (MetricItem & { split: string })[];
}

/** One eval item of a suite a task builds (its id is local to the suite; services prefix it with the suite id). */
export interface SuiteItemDraft {
  id: string;
  split: 'public' | 'heldout' | 'test' | 'probe';
  grader: string;
  category: string;
  prompt: string;
  reference: string;
  sourceFile: string;
  graderConfig: Record<string, unknown> | null;
  /** A probe's kind, and the local id of the public item it twins. */
  probe: { kind: string; of?: string } | null;
}

/** A suite a task builds: stored once under `<name>@<first 12 hex digits of contentHash>`. */
export interface BuiltSuite {
  name: string;
  contentHash: string;
  items: SuiteItemDraft[];
  /** Kept on the suite row (canaries, what was dropped and why). */
  settings: SuiteSettings;
}

/** One example of a base dataset version a task builds. */
export interface BaseExample {
  prompt: string;
  completion: string;
  category: string;
  /** Where it came from (a file of the corpus), kept on the example row. */
  sourceRef: string;
}

/** A base dataset version a task builds: `<campaign>/<datasetName>@<tag>`, made once; `examples` is read only then. */
export interface BaseVersionDraft {
  datasetName: string;
  tag: string;
  /** Every example's `source` (and the one key of `countsBySource`). */
  source: string;
  examples(): BaseExample[];
  /** Written into the version's manifest beside its own fields. */
  manifest?: Record<string, unknown>;
}

/** Where a task's eval suite and base dataset version come from: built by the task, or registered (a custom task). */
export interface TaskSources {
  suite: { built: BuiltSuite } | { registered: string };
  base: { built: BaseVersionDraft } | { registered: string };
}

export interface PrepareContext {
  /** FLYWHEEL_HOME: where a task keeps what it builds once (the built-in corpus). */
  home: string;
  task: TaskSpec;
  /** The campaign's seed (`innerLoop.seed`). */
  seed: number;
}

/** The model's answer to one ask, with the fields every feedback event carries. */
export interface UserReply {
  /** The feedback event's id. */
  id: string;
  campaignId: string;
  modelVersion: string;
  completion: string;
}

/** One exchange of a round: a user asks `prompt`, the production model answers, the user judges the answer. */
export interface UserAsk {
  prompt: string;
  /** Bytes the completion request asks for. */
  maxBytes: number;
  /** The feedback event the user sends about the reply. Deterministic: no randomness at judging time. */
  judge(reply: UserReply): FeedbackEvent;
}

export interface RoundOptions {
  round: number;
  events: number;
  seed: number;
  /** Users in the population. */
  users: number;
}

export interface SimulatedUsersOfTask {
  /** The round's asks in event order (the k-th is event k); a pure function of the options. */
  round(o: RoundOptions): Promise<UserAsk[]>;
}

/** Where a task's users find their material: FLYWHEEL_HOME (the built-in corpus) and the task's seed. */
export interface TaskUsersContext {
  home: string;
  seed: number;
}

/** A task that ships with Flywheel as an example (`flywheel demo --task`). */
export interface TaskExample {
  /** The campaign spec `flywheel demo --task` runs. */
  spec: string;
  /** Writes the task's `train.jsonl` and `suite.json` into `dir` (a task that takes the user's path: dataset add, suite add). */
  writeFiles?(dir: string, seed: number): { trainFile: string; suiteFile: string };
}

export interface Task {
  /** The registry's name (`flywheel demo --task`, `outerLoop.teacher.task`). */
  name: string;
  /** The spec's `task.kind` a campaign of this task has (`custom` for a task of registered files). */
  kind: TaskSpec['kind'];
  /** The selection a spec of this kind gets by default. */
  selection: TaskSelection;
  /** The suite's shape, for a task that builds its suite; absent: the registered suite's items say. */
  suite?: TaskSuiteShape;
  /** Held-out figures a summary prints after the selection metric's, when the suite reports them. @default none */
  summaryMetrics?: SummaryMetric[];
  /** The task's search space, for a trainer that takes its knobs from it (benches, examples). */
  searchSpace?: SearchSpace;
  /**
   * How its held-out items cluster: the promotion gate's default `promotion.clusterBy` (a spec's own overrides it).
   * `source`: the items cut from one source file share its quirks and count as one unit of evidence; `item`: items are
   * drawn independently; `auto`: by source when the items name at least two distinct source files, else by item
   * (core/gate/item-layout.ts). @default "item"
   */
  itemClusters?: ClusterBy;
  /**
   * Flywheel's own trainer that trains the gate's seed reruns, the held-out leak check's reference model, in place of
   * the campaign's trainer whenever it can retrain the recipe (the same checkpoint format, every knob one of its own):
   * code no candidate writes, so a leak in the candidate's trainer code is not in the reference
   * (core/gate/reference-control.ts). @default none: the incumbent's pinned trainer, else the candidate's own
   */
  referenceTrainer?: TaskReferenceTrainer;
  /** Its eval suite and base dataset version (built once, or the registered ones the spec names). */
  sources(ctx: PrepareContext): Promise<TaskSources>;
  /** Folders of the worker's machine holding the task's eval sources: hidden from every trainer. @default none */
  hiddenSources?(repo: string): string[];
  /** Simulated users for demos and tests. */
  users?(ctx: TaskUsersContext): SimulatedUsersOfTask;
  /** What its simulated users ask, for help text (e.g. "sums outside its suite"). */
  usersAsk?: string;
  /** Its own teacher (spec `outerLoop.teacher.task`): critiques, categories and a verifier of revisions. */
  teacher?: TaskTeacher;
  /** Shipped as an example. */
  example?: TaskExample;
}

/**
 * What a summary prints, untrained → winner: the metric the campaign selects on, in the direction it selects, then the
 * task's other summary metrics (each once).
 */
export function summaryMetricsOf(selection: TaskSelection, task: Pick<Task, 'summaryMetrics'>): SummaryMetric[] {
  const own = task.summaryMetrics?.find((m) => m.metric === selection.metric);
  const first: SummaryMetric = {
    metric: selection.metric,
    ...(own?.unit ? { unit: own.unit } : {}),
    lowerIsBetter: selection.mode === 'min',
  };
  return [first, ...(task.summaryMetrics ?? []).filter((m) => m.metric !== selection.metric)];
}
