// The teacher of the outer loop: explains a failure and turns it into training signals. Two implementations share
// one interface: the built-in one (core/teacher/builtin-teacher.ts, no model) and an OpenAI-compatible chat model
// (openai-teacher.ts). A model's unusable reply falls back to the built-in critique, saying so.
import {
  BUILTIN_TEACHER,
  BUILTIN_TEACHER_PROMPT_VERSION,
  critique,
  type Failure,
  type TeacherCritique,
} from '../core/teacher/builtin-teacher';
import { BudgetExceededError } from '../core/errors';
import type { TaskTeacher } from '../core/teacher/task-teacher';
import { TokenBudgetExceededError, UnusableReplyError } from './agent-errors';

export type { Failure, TeacherCritique } from '../core/teacher/builtin-teacher';

export interface Teacher {
  /** Recorded as `critiques.teacher`: `builtin`, or the model's name. */
  name: string;
  /** Recorded as `critiques.prompt_version`: the prompt file (or the built-in derivation) that made the critique. */
  promptVersion: string;
  critique(failure: Failure): Promise<TeacherCritique>;
}

export const builtinTeacher: Teacher = {
  name: BUILTIN_TEACHER,
  promptVersion: BUILTIN_TEACHER_PROMPT_VERSION,
  critique: (failure) => Promise.resolve(critique(failure)),
};

/** A task's built-in teacher (core/teacher/task-teacher.ts) as a Teacher. */
export function teacherOfTask(task: TaskTeacher): Teacher {
  return { name: task.name, promptVersion: task.promptVersion, critique: (failure) => Promise.resolve(task.critique(failure)) };
}

/** A critique with the teacher and prompt that actually made it (the built-in ones after a fallback). */
export interface TaughtCritique extends TeacherCritique {
  teacher: string;
  promptVersion: string;
}

/**
 * The teacher's critique; an unusable reply (UnusableReplyError) or a spent token or cost budget becomes the built-in
 * critique of the same failure, whose text starts by saying why. Any other error (a retryable 429, a bad key) propagates to the activity.
 */
export async function critiqueOrFallback(teacher: Teacher, failure: Failure, fallback: Teacher = builtinTeacher): Promise<TaughtCritique> {
  try {
    return { ...(await teacher.critique(failure)), teacher: teacher.name, promptVersion: teacher.promptVersion };
  } catch (e) {
    const spent = e instanceof TokenBudgetExceededError || e instanceof BudgetExceededError;
    if (!(e instanceof UnusableReplyError) && !spent) throw e;
    const made = await fallback.critique(failure);
    const why = spent
      ? `The teacher model was not asked (${teacher.name}: ${e.message}); derived mechanically instead.`
      : `The teacher model's reply was unusable (${teacher.name}, ${teacher.promptVersion}: ${e.message}); derived mechanically instead.`;
    return { text: `${why} ${made.text}`, signals: made.signals, teacher: fallback.name, promptVersion: fallback.promptVersion };
  }
}
