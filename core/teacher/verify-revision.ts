// Whether a revision may train: the task's verifier decides when it can tell, else the verified reference (an
// edit's correction), else nothing can verify it and it yields nothing. Pure.
import type { TaskTeacher } from './task-teacher';

export interface RevisionVerdict {
  verified: boolean;
  /** `task:<teacher name>`, `reference`, or `none`. */
  by: string;
}

export function verifyRevision(
  task: Pick<TaskTeacher, 'name' | 'verify'> | undefined,
  prompt: string,
  revision: string,
  reference: string | undefined,
): RevisionVerdict {
  if (revision.trim() === '') return { verified: false, by: 'none' };
  const byTask = task?.verify?.(prompt, revision);
  if (byTask !== undefined) return { verified: byTask, by: `task:${task!.name}` };
  if (reference !== undefined) return { verified: revision === reference || revision.trimEnd() === reference.trimEnd(), by: 'reference' };
  return { verified: false, by: 'none' };
}
