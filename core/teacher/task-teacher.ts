// What a task may teach the outer loop about its own prompts, beyond what any task gets: a critique that knows the
// task (which column's carry an addition dropped) instead of a token diff, the category a user's prompt belongs
// to, and a verifier of an answer to one of its prompts. Pure: a task's module (tasks/<name>/teacher.ts)
// implements it as its Task's `teacher` (core/task.ts), the registry (tasks/index.ts) finds it by name, and the spec
// picks one by `outerLoop.teacher.task`, so no platform code names a task.
import type { Failure, TeacherCritique } from './builtin-teacher';

export interface TaskTeacher {
  /** Recorded as `critiques.teacher`, e.g. `builtin:<task>`. */
  name: string;
  /** Recorded as `critiques.prompt_version`; bumped whenever the critique or its signals change. */
  promptVersion: string;
  /** The critique of a failure with a reference (its signals: the reference as target, as every teacher's). */
  critique(failure: Failure): TeacherCritique;
  /** The loss-weight category of one of the task's prompts; undefined for a prompt not of the task. */
  categoryOf?(prompt: string): string | undefined;
  /**
   * Whether `output` answers `prompt` correctly, checked as the task's graders check; undefined when the task
   * cannot tell (a prompt not of the task), and then only a verified reference can verify an answer.
   */
  verify?(prompt: string, output: string): boolean | undefined;
}
