// How Flywheel speaks to a task's own program (spec `task.users.command`, `task.teacher.command`; docs/tasks.md):
// one JSON object per line each way, a response per request, in order. The runner (backends/sandbox/
// json-lines-command.ts) starts it sandboxed; the protocol modules (core/command-users.ts, agents/command-teacher.ts)
// see only this function, so they stay pure. Pure types.

/**
 * Sends `body` as one line and reads the program's answer with `read`; a message `read` throws becomes
 * `<role> command line N: <message>`, and an answer `{"error": "…"}` fails the request with that text.
 */
export type AskCommand = <T>(body: Record<string, unknown>, read: (answer: Record<string, unknown>) => T) => Promise<T>;

/** The string field `key` of an answer, or a message naming it. */
export function stringField(answer: Record<string, unknown>, key: string, optional = false): string | undefined {
  const v = answer[key];
  if (v === undefined && optional) return undefined;
  if (typeof v !== 'string') throw new Error(`"${key}" must be a string, got ${v === undefined ? 'nothing' : JSON.stringify(v)}`);
  return v;
}
