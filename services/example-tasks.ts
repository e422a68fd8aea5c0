// The example tasks Flywheel ships, by the name `flywheel demo --task` and `flywheel simulate-users --task` take, and
// the task teachers `outerLoop.teacher.task` names: read from the task registry (tasks/index.ts via
// services/task-registry.ts), so this file names no task.
import { NonRetryableError, UsageError } from '../core/errors';
import type { SimulatedUsersOfTask, TaskUsersContext } from '../core/task';
import type { TaskTeacher } from '../core/teacher/task-teacher';
import { exampleTasks, taskByName, tasksWithTeacher } from './task-registry';

export interface ExampleTask {
  /** The task's simulated users. */
  users(ctx: TaskUsersContext): SimulatedUsersOfTask;
  /** What its simulated users ask, for help text. */
  usersAsk?: string;
  /** The campaign spec `flywheel demo --task` runs. */
  spec: string;
  /** Writes the task's `train.jsonl` and `suite.json` into `dir` (a task of the user's own path only). */
  writeFiles?(dir: string, seed: number): { trainFile: string; suiteFile: string };
  /** The task's built-in teacher (spec `outerLoop.teacher.task`): critiques, categories and a verifier of its prompts. */
  teacher?: TaskTeacher;
}

export const EXAMPLE_TASK_NAMES = exampleTasks().map((t) => t.name);

/** `flywheel demo`'s and `flywheel simulate-users`' task when none is named: the registry's first example. */
export const DEFAULT_EXAMPLE_TASK = EXAMPLE_TASK_NAMES[0];

/** A task that is not one of the shipped examples. */
export class UnknownExampleTaskError extends UsageError {}

export function exampleTask(name: string): ExampleTask {
  const t = exampleTasks().find((x) => x.name === name);
  if (!t?.example || !t.users) throw new UnknownExampleTaskError(`unknown task "${name}" (tasks: ${EXAMPLE_TASK_NAMES.join(', ')})`);
  const { example, users } = t;
  return { users: (ctx) => users(ctx), usersAsk: t.usersAsk, spec: example.spec, writeFiles: example.writeFiles, teacher: t.teacher };
}

/** A task named by `outerLoop.teacher.task` that has no built-in teacher: retrying cannot help. */
export class UnknownTaskTeacherError extends NonRetryableError {}

/** Why `name` cannot be `outerLoop.teacher.task`, or undefined when it can. */
export function taskTeacherProblem(name: string): string | undefined {
  if (taskByName(name)?.teacher) return undefined;
  const named = tasksWithTeacher().map((t) => t.name);
  return `outerLoop.teacher.task: "${name}" has no built-in teacher (tasks with one: ${named.join(', ')})`;
}

/** The built-in teacher of the shipped task `name` (spec `outerLoop.teacher.task`); undefined when none is named. */
export function taskTeacherOf(name: string | undefined): TaskTeacher | undefined {
  if (name === undefined) return undefined;
  const problem = taskTeacherProblem(name);
  if (problem) throw new UnknownTaskTeacherError(problem);
  return taskByName(name)?.teacher;
}
