// The demos' user traffic: for one round, a task's simulated users ask the production model (`POST /v1/complete`),
// judge the answers, and send the verdicts through the feedback API (`POST /v1/feedback:batch`), exactly as real
// clients would. What they ask and how they judge is the task's (services/simulated-users-task.ts); this file knows
// no task. Event ids are `sim-<campaign>-r<round>-<k>`, so re-running a round stores nothing twice.
import { jsonBody } from './json-body';
import type { CompletionReply } from '../core/completion';
import { FEEDBACK_KINDS, type FeedbackEvent } from '../core/feedback';
import { FlywheelError, UsageError } from '../core/errors';
import type { ProgramUsers } from '../core/command-users';
import type { SimulatedUsersOfTask } from './simulated-users-task';

export interface SimulateUsersOptions {
  /** Base URL of `flywheel serve`, e.g. `http://127.0.0.1:8787`. */
  apiUrl: string;
  /** Bearer token (FLYWHEEL_API_TOKEN) when the server requires one. @default none */
  token?: string;
  campaignId: string;
  /** The round number (an integer >= 0): part of every event id, and of the prompt draw. */
  round: number;
  /** Events to send this round (1 to 100000). */
  events: number;
  /** Seeds the population, the prompts and who answers which. */
  seed: number;
  /**
   * The task's users: who asks what, and how they judge (services/example-tasks.ts names the shipped ones; a program's,
   * core/command-users.ts, judges asynchronously).
   */
  task: SimulatedUsersOfTask | ProgramUsers;
  /** Users in the population. @default 20 */
  users?: number;
  /** Events per `POST /v1/feedback:batch`. @default 500 */
  batchSize?: number;
}

export interface SimulateUsersResult {
  sent: number;
  inserted: number;
  duplicates: number;
  byKind: Record<FeedbackEvent['kind'], number>;
  /** The checkpoints that answered (one, unless a promotion landed mid-round). */
  modelVersions: string[];
}

/** Options that cannot describe a round. */
export class InvalidSimulationError extends UsageError {}

/** The API answered with an error; `status` is its HTTP status (409 for a round re-run against another model). */
export class SimulationRequestError extends FlywheelError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const MAX_EVENTS = 100_000;

function withDefaults(o: SimulateUsersOptions): SimulateUsersOptions & Required<Pick<SimulateUsersOptions, 'users' | 'batchSize'>> {
  return { users: 20, batchSize: 500, ...o };
}

/** The id of the k-th event of a round (campaign ids are already `[a-z0-9-]`; anything else becomes `_`). */
export const simulatedEventId = (campaignId: string, round: number, k: number): string =>
  `sim-${campaignId.replace(/[^A-Za-z0-9._:-]/g, '_')}-r${round}-${k}`;

export async function simulateUsers(options: SimulateUsersOptions): Promise<SimulateUsersResult> {
  const o = withDefaults(options);
  const int = (v: number, lo: number, hi: number) => Number.isInteger(v) && v >= lo && v <= hi;
  if (!int(o.round, 0, Number.MAX_SAFE_INTEGER)) throw new InvalidSimulationError(`round must be an integer >= 0, got ${o.round}`);
  if (!int(o.events, 1, MAX_EVENTS)) throw new InvalidSimulationError(`events must be an integer from 1 to ${MAX_EVENTS}, got ${o.events}`);
  if (!int(o.users, 1, MAX_EVENTS) || !int(o.batchSize, 1, 1000))
    throw new InvalidSimulationError('users must be >= 1 and batchSize from 1 to 1000');

  const asks = await o.task.round({ round: o.round, events: o.events, seed: o.seed, users: o.users });
  const events: FeedbackEvent[] = [];
  const modelVersions = new Set<string>();
  for (const [k, ask] of asks.entries()) {
    const reply = (await post(o, '/v1/complete', {
      campaignId: o.campaignId,
      prompt: ask.prompt,
      maxBytes: ask.maxBytes,
    })) as unknown as CompletionReply;
    modelVersions.add(reply.modelVersion);
    events.push(
      await ask.judge({
        id: simulatedEventId(o.campaignId, o.round, k),
        campaignId: o.campaignId,
        modelVersion: reply.modelVersion,
        completion: reply.completion,
      }),
    );
  }

  const result: SimulateUsersResult = {
    sent: 0,
    inserted: 0,
    duplicates: 0,
    byKind: Object.fromEntries(FEEDBACK_KINDS.map((k) => [k, 0])) as SimulateUsersResult['byKind'],
    modelVersions: [...modelVersions],
  };
  for (let i = 0; i < events.length; i += o.batchSize) {
    const batch = events.slice(i, i + o.batchSize);
    const r = (await post(o, '/v1/feedback:batch', { events: batch })) as { inserted: number; duplicates: number };
    result.sent += batch.length;
    result.inserted += r.inserted;
    result.duplicates += r.duplicates;
  }
  for (const e of events) result.byKind[e.kind]++;
  return result;
}

async function post(o: SimulateUsersOptions, route: string, body: unknown): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  const res = await fetch(`${o.apiUrl.replace(/\/+$/, '')}${route}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const { text, parsed } = await jsonBody(res);
  if (!res.ok) {
    const problems = Array.isArray(parsed.problems) ? `: ${(parsed.problems as string[]).slice(0, 3).join('; ')}` : '';
    throw new SimulationRequestError(
      res.status,
      `POST ${route}: ${res.status} ${typeof parsed.error === 'string' ? parsed.error : text.slice(0, 200)}${problems}`,
    );
  }
  return parsed;
}
