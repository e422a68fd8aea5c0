// Whether a revision may train: the task's check decides when it can tell (a teacher program's `verify`, else the task
// teacher's verifier), else the verified reference (an edit's correction), else nothing can verify it and it yields
// nothing. Pure: the caller asks the task's check and passes its verdict.

export interface RevisionVerdict {
  verified: boolean;
  /** `task:<teacher name>`, `reference`, or `none`. */
  by: string;
}

/** What the task's check said of a revision: who asked (`task:<name>`) and its verdict, undefined where it cannot tell. */
export interface TaskVerdict {
  by: string;
  verdict: boolean | undefined;
}

export function verifyRevision(byTask: TaskVerdict | undefined, revision: string, reference: string | undefined): RevisionVerdict {
  if (revision.trim() === '') return { verified: false, by: 'none' };
  if (byTask?.verdict !== undefined) return { verified: byTask.verdict, by: byTask.by };
  if (reference !== undefined) return { verified: revision === reference || revision.trimEnd() === reference.trimEnd(), by: 'reference' };
  return { verified: false, by: 'none' };
}
