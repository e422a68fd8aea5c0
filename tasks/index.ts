// The task registry: every task Flywheel ships, by name, and the Task (core/task.ts) a campaign spec runs. The one
// module outside tasks/ that imports it is services/task-registry.ts; adding a task is a folder tasks/<name>/ with a
// task.ts and one line here (docs/tasks.md).
import type { Task } from '../core/task';
import type { TaskSpec } from '../core/spec';
import { arithmeticTask } from './arithmetic/task';
import { builtinCodeTask } from './builtin-code/task';
import { customTask } from './custom/task';

const TASKS: readonly Task[] = [builtinCodeTask, arithmeticTask, customTask];

/** Every registered task's name. */
export const TASK_NAMES: readonly string[] = TASKS.map((t) => t.name);

/** The task of that name, or undefined. */
export function taskByName(name: string): Task | undefined {
  return TASKS.find((t) => t.name === name);
}

/** The task a spec's `task` block runs: the one that builds its own suite for its kind, else the generic custom task. */
export function taskForSpec(task: TaskSpec): Task {
  return TASKS.find((t) => t.kind === task.kind && t.name === task.kind) ?? customTask;
}

/** The tasks that ship as examples (`flywheel demo --task`, `flywheel simulate-users --task`). */
export function exampleTasks(): Task[] {
  return TASKS.filter((t) => t.example !== undefined);
}

/** The tasks with a teacher of their own (`outerLoop.teacher.task`). */
export function tasksWithTeacher(): Task[] {
  return TASKS.filter((t) => t.teacher !== undefined);
}
