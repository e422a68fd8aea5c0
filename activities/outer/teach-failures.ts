// Runs a teacher over a critique step's failures: a few requests at a time, the first `maxFailures` by the chosen
// teacher and the rest by the built-in one (a model's cost and time stay bounded inside the activity's timeout).
// Each batch is handed to `write` before the next starts, so a retry after a 429 pays only for what is left.
import { builtinTeacher, critiqueOrFallback, teacherOfTask, type Failure, type TaughtCritique, type Teacher } from '../../agents/teacher';
import type { TaskTeacher } from '../../core/teacher/task-teacher';
import { taskTeacherOf } from '../../services/example-tasks';
import { teacherFor } from '../../agents/select-teacher';
import type { CampaignSpec } from '../../core/spec';
import { agentCallerFor } from '../agents/agent-caller';
import type { ActivityDeps } from '../deps';
import { heartbeatIfActivity } from '../heartbeat';
import { programTeacherOf } from './program-teacher';

/** Model requests in flight at once. */
const CONCURRENCY = 4;
/** The built-in teacher makes no requests: its critiques are written in large batches. */
const BUILTIN_BATCH = 500;

export interface TeacherChoice {
  teacher: Teacher;
  /** Failures per call the teacher sees; the rest get the built-in critique. @default Infinity */
  maxFailures?: number;
  /** The built-in teacher past `maxFailures` and after an unusable reply. @default builtinTeacher */
  fallback?: Teacher;
  /** The task's own teacher (spec `outerLoop.teacher.task`): categories of prompts, the verifier of revisions. */
  task?: TaskTeacher;
  /** Ends a teacher program (spec `task.teacher.command`) once teachFailures is done with it. @default nothing to end */
  close?: () => void;
}

/** The campaign's teacher and its cap, from the injected choice or the worker's environment. */
export function teacherChoiceOf(deps: ActivityDeps, spec: CampaignSpec): TeacherChoice {
  const task = taskTeacherOf(spec.outerLoop.teacher.task);
  // A task's teacher program stands where the built-in one would: every failure a model does not critique.
  const program = programTeacherOf(spec, deps.home);
  const fallback = program?.teacher ?? (task ? teacherOfTask(task) : builtinTeacher);
  const teacher = teacherFor(spec, agentCallerFor(deps.db, spec, deps.agentEnv ?? process.env), fallback);
  return { teacher, maxFailures: spec.outerLoop.teacher.maxFailures, fallback, task, ...(program ? { close: program.close } : {}) };
}

export async function teachFailures<T>(
  choice: TeacherChoice,
  items: T[],
  failureOf: (item: T) => Failure,
  write: (made: { item: T; taught: TaughtCritique }[]) => Promise<void>,
): Promise<void> {
  try {
    await teachInBatches(choice, items, failureOf, write);
  } finally {
    choice.close?.();
  }
}

async function teachInBatches<T>(
  choice: TeacherChoice,
  items: T[],
  failureOf: (item: T) => Failure,
  write: (made: { item: T; taught: TaughtCritique }[]) => Promise<void>,
): Promise<void> {
  const limit = choice.maxFailures ?? Infinity;
  const fallback = choice.fallback ?? builtinTeacher;
  const size = choice.teacher === fallback ? BUILTIN_BATCH : CONCURRENCY;
  for (let i = 0; i < items.length; i += size) {
    const batch = items.slice(i, i + size);
    const settled = await Promise.allSettled(
      batch.map((item, k) => critiqueOrFallback(i + k < limit ? choice.teacher : fallback, failureOf(item), fallback)),
    );
    const made = batch.flatMap((item, k) => {
      const s = settled[k];
      return s.status === 'fulfilled' ? [{ item, taught: s.value }] : [];
    });
    await write(made);
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    heartbeatIfActivity({ critiqued: i + batch.length });
  }
}
