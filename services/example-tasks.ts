// The example tasks Flywheel ships, by the name `flywheel demo --task` and `flywheel simulate-users --task` take:
// each one's simulated users and, for a task that takes the user's path, the generator of its dataset and suite
// files and its campaign spec. The platform runs them through the same interfaces as any task; only this list names them.
import path from 'node:path';
import { builtinCodeUsers } from '../tasks/builtin-code/user-rounds';
import { arithmeticUsers } from '../tasks/arithmetic/simulated-users';
import { writeArithmeticFiles } from '../tasks/arithmetic/generate';
import { arithmeticTeacher } from '../tasks/arithmetic/teacher';
import type { TaskTeacher } from '../core/teacher/task-teacher';
import { NonRetryableError, UsageError } from '../core/errors';
import { corpusDirOf } from './paths';
import type { SimulatedUsersOfTask, TaskUsersContext } from './simulated-users-task';

export interface ExampleTask {
  /** The task's simulated users. */
  users(ctx: TaskUsersContext): SimulatedUsersOfTask;
  /** The campaign spec `flywheel demo --task` runs. */
  spec: string;
  /** Writes the task's `train.jsonl` and `suite.json` into `dir` (a task of the user's own path only). */
  writeFiles?(dir: string, seed: number): { trainFile: string; suiteFile: string };
  /** The task's built-in teacher (spec `outerLoop.teacher.task`): critiques, categories and a verifier of its prompts. */
  teacher?: TaskTeacher;
}

const TASKS_DIR = path.join(__dirname, '..', 'tasks');

const EXAMPLE_TASKS: Record<string, ExampleTask> = {
  'builtin-code': {
    users: ({ home }) => builtinCodeUsers({ corpusDir: corpusDirOf(home) }),
    spec: path.join(TASKS_DIR, 'builtin-code', 'builtin-demo.yaml'),
  },
  arithmetic: {
    users: ({ seed }) => arithmeticUsers(seed),
    spec: path.join(TASKS_DIR, 'arithmetic', 'arithmetic.yaml'),
    writeFiles: (dir, seed) => writeArithmeticFiles(dir, seed),
    teacher: arithmeticTeacher,
  },
};

export const EXAMPLE_TASK_NAMES = Object.keys(EXAMPLE_TASKS);

/** A task that is not one of the shipped examples. */
export class UnknownExampleTaskError extends UsageError {}

export function exampleTask(name: string): ExampleTask {
  const t = EXAMPLE_TASKS[name];
  if (!t) throw new UnknownExampleTaskError(`unknown task "${name}" (tasks: ${EXAMPLE_TASK_NAMES.join(', ')})`);
  return t;
}

/** A task named by `outerLoop.teacher.task` that has no built-in teacher: retrying cannot help. */
export class UnknownTaskTeacherError extends NonRetryableError {}

/** The built-in teacher of the shipped task `name` (spec `outerLoop.teacher.task`); undefined when none is named. */
export function taskTeacherOf(name: string | undefined): TaskTeacher | undefined {
  if (name === undefined) return undefined;
  const t = EXAMPLE_TASKS[name]?.teacher;
  if (!t) {
    const named = EXAMPLE_TASK_NAMES.filter((n) => EXAMPLE_TASKS[n].teacher);
    throw new UnknownTaskTeacherError(`outerLoop.teacher.task: "${name}" has no built-in teacher (tasks with one: ${named.join(', ')})`);
  }
  return t;
}
