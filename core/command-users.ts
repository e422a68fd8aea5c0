// Simulated users written as a program in any language (spec `task.users.command`, docs/tasks.md): for a round the
// program is asked for its prompts, then to judge each answer of the production model. Pure: the program is reached
// through an AskCommand (core/task-command.ts), so this file holds only the protocol and its checks.
import { checkFeedback, type FeedbackEvent } from './feedback';
import type { RoundOptions, UserAsk, UserReply } from './task';
import type { AskCommand } from './task-command';

/** The most bytes a user may ask for when the program names none. */
export const DEFAULT_ASK_BYTES = 256;
const MAX_ASK_BYTES = 64 * 1024;

/** `{"asks": [{"prompt": "…", "maxBytes": 4}, …]}`: exactly `events` asks. */
function readAsks(answer: Record<string, unknown>, events: number): { prompt: string; maxBytes: number }[] {
  const asks = answer.asks;
  if (!Array.isArray(asks)) throw new Error('"asks" must be a list of {"prompt": "…", "maxBytes": N}');
  if (asks.length !== events) throw new Error(`"asks" must hold ${events} asks (the round's events), got ${asks.length}`);
  return asks.map((a: unknown, k) => {
    const o = (a ?? {}) as Record<string, unknown>;
    if (typeof o.prompt !== 'string') throw new Error(`asks.${k}.prompt: must be a string`);
    const maxBytes = o.maxBytes ?? DEFAULT_ASK_BYTES;
    if (typeof maxBytes !== 'number' || !Number.isInteger(maxBytes) || maxBytes < 1 || maxBytes > MAX_ASK_BYTES)
      throw new Error(`asks.${k}.maxBytes: must be an integer from 1 to ${MAX_ASK_BYTES}`);
    return { prompt: o.prompt, maxBytes };
  });
}

/** The verdict `{"kind": "edit", "correction": "…"}` as a full feedback event, checked as the feedback API checks it. */
function readVerdict(answer: Record<string, unknown>, base: Omit<FeedbackEvent, 'kind'>): FeedbackEvent {
  const r = checkFeedback({ ...answer, ...base });
  if (r.problems) throw new Error(r.problems.join('; '));
  return r.event;
}

/** An ask of a program's users: as a task's own (core/task.ts UserAsk), but its verdict comes back from the program. */
export interface ProgramUserAsk extends Omit<UserAsk, 'judge'> {
  judge(reply: UserReply): Promise<FeedbackEvent>;
}

/** A program's users (spec `task.users.command`): services/simulate-users.ts runs them as it runs a task's own. */
export interface ProgramUsers {
  round(o: RoundOptions): Promise<ProgramUserAsk[]>;
}

/**
 * The program's users. Requests: `{"type": "round", "round", "events", "seed", "users"}` (answer: the asks), then one
 * `{"type": "judge", "round", "ask", "prompt", "completion"}` per ask, in order (answer: the verdict).
 */
export function commandUsers(ask: AskCommand): ProgramUsers {
  return {
    async round(o: RoundOptions): Promise<ProgramUserAsk[]> {
      const asks = await ask({ type: 'round', round: o.round, events: o.events, seed: o.seed, users: o.users }, (a) =>
        readAsks(a, o.events),
      );
      return asks.map(({ prompt, maxBytes }, k) => ({
        prompt,
        maxBytes,
        judge: (reply: UserReply) =>
          ask({ type: 'judge', round: o.round, ask: k, prompt, completion: reply.completion }, (a) =>
            readVerdict(a, {
              id: reply.id,
              campaignId: reply.campaignId,
              modelVersion: reply.modelVersion,
              prompt,
              output: reply.completion,
            }),
          ),
      }));
    },
  };
}
