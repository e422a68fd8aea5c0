// Whose users `flywheel simulate-users --task NAME` runs: a shipped example's own (builtin-code, arithmetic), or, for
// a registered task without users of its own (`custom`), the program the campaign's spec names as
// `task.users.command`, started in the trainers' sandbox (backends/sandbox/json-lines-command.ts).
import path from 'node:path';
import { JsonLinesCommand } from '../backends/sandbox/json-lines-command';
import { REPO } from '../backends/trainer-programs';
import { commandUsers, type ProgramUsers } from '../core/command-users';
import type { SimulatedUsersOfTask } from '../core/task';
import { EXAMPLE_TASK_NAMES, exampleTask } from '../services/example-tasks';
import { hiddenTaskSources, TASK_NAMES } from '../services/task-registry';
import { UsageError } from './errors';
import { requireCampaign } from './require-campaign';
import { withDb } from './with-db';

export interface TaskUsers {
  users: SimulatedUsersOfTask | ProgramUsers;
  /** Ends the users' program, if one was started. */
  close(): void;
}

/** Every task `--task` takes: the examples, then the registered tasks whose users a spec names. */
export const USERS_TASK_NAMES = [...EXAMPLE_TASK_NAMES, ...TASK_NAMES.filter((n) => !EXAMPLE_TASK_NAMES.includes(n))];

export async function taskUsers(campaign: string, task: string, o: { home: string; seed: number }): Promise<TaskUsers> {
  if (EXAMPLE_TASK_NAMES.includes(task)) return { users: exampleTask(task).users(o), close: () => undefined };
  if (!TASK_NAMES.includes(task)) throw new UsageError(`unknown task "${task}" (tasks: ${USERS_TASK_NAMES.join(', ')})`);
  const { spec } = await withDb((db) => requireCampaign(db, campaign));
  if (spec.task.kind !== 'custom' || !spec.task.users)
    throw new UsageError(
      `campaign "${campaign}" names no users program: add task.users.command to its spec (docs/tasks.md), or pass --task ${EXAMPLE_TASK_NAMES.join(' or ')}`,
    );
  const program = new JsonLinesCommand({
    role: 'users',
    command: spec.task.users.command,
    hide: [path.resolve(o.home), ...hiddenTaskSources(spec.task, REPO)],
  });
  return { users: commandUsers(program.ask), close: () => program.close() };
}
