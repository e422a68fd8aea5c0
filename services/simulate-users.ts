// The demo's user traffic: for one round, simulated users ask the production model (`POST /v1/complete`) to
// continue lines of the built-in corpus's train split, judge the answers, and send the verdicts through the
// feedback API (`POST /v1/feedback:batch`), exactly as real clients would. Event ids are `sim-<campaign>-r<round>-<k>`,
// so re-running a round stores nothing twice.
import { ensureCorpus, readTrainFiles } from '../tasks/builtin-code/corpus-cache';
import { drawTrainPrompts, type TrainPrompt } from '../tasks/builtin-code/train-prompts';
import { Rng } from '../core/stream-rng';
import { MAX_COMPLETION_BYTES, type CompletionReply } from '../core/completion';
import { FEEDBACK_KINDS, type FeedbackEvent } from '../core/feedback';
import { judge, simulatedPopulation } from '../tasks/builtin-code/simulated-users';
import { FlywheelError, UsageError } from '../core/errors';

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
  /** The built-in corpus folder (built when missing); prompts are drawn from its train split. Needed without `prompts`. */
  corpusDir?: string;
  /** A pool of train-split prompts to draw from instead of the corpus (each round samples `events` of them). */
  prompts?: readonly TrainPrompt[];
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

  const turns = await promptsOfRound(o);
  const population = simulatedPopulation({ size: o.users, seed: o.seed });
  const pick = Rng.derive(o.seed, `simulate-users:who:r${o.round}`);
  const events: FeedbackEvent[] = [];
  const modelVersions = new Set<string>();
  for (const [k, p] of turns.entries()) {
    const user = population[pick.int(population.length)];
    const maxBytes = Math.min(MAX_COMPLETION_BYTES, Buffer.byteLength(p.reference));
    const reply = (await post(o, '/v1/complete', { campaignId: o.campaignId, prompt: p.prompt, maxBytes })) as unknown as CompletionReply;
    modelVersions.add(reply.modelVersion);
    events.push(
      judge(user, {
        id: simulatedEventId(o.campaignId, o.round, k),
        campaignId: o.campaignId,
        modelVersion: reply.modelVersion,
        prompt: p.prompt,
        completion: reply.completion,
        reference: p.reference,
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

/** A round's prompts, in event order (the k-th answers event k): `events` draws from the pool, or from the corpus's train files. */
export async function promptsOfRound(
  o: Pick<SimulateUsersOptions, 'round' | 'events' | 'seed' | 'corpusDir' | 'prompts'>,
): Promise<TrainPrompt[]> {
  const stream = `simulate-users:r${o.round}`;
  if (o.prompts) {
    if (o.prompts.length === 0) throw new InvalidSimulationError('the prompt pool is empty');
    const rng = Rng.derive(o.seed, stream);
    return Array.from({ length: o.events }, () => o.prompts![rng.int(o.prompts!.length)]);
  }
  if (!o.corpusDir) throw new InvalidSimulationError('give corpusDir or a prompt pool');
  const { files } = readTrainFiles(o.corpusDir, await ensureCorpus(o.corpusDir));
  const drawn = drawTrainPrompts(files, { count: o.events, seed: o.seed, stream });
  if (drawn.length < o.events)
    throw new InvalidSimulationError(`the train split has only ${drawn.length} prompt positions, ${o.events} asked`);
  return drawn;
}

async function post(o: SimulateUsersOptions, route: string, body: unknown): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  const res = await fetch(`${o.apiUrl.replace(/\/+$/, '')}${route}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Not our server, or a proxy's page: reported below with the status.
  }
  if (!res.ok) {
    const problems = Array.isArray(parsed.problems) ? `: ${(parsed.problems as string[]).slice(0, 3).join('; ')}` : '';
    throw new SimulationRequestError(
      res.status,
      `POST ${route}: ${res.status} ${typeof parsed.error === 'string' ? parsed.error : text.slice(0, 200)}${problems}`,
    );
  }
  return parsed;
}
