// What a task hands the simulated users: for a round, who asks which prompt and how that user judges the production
// model's answer. services/simulate-users.ts runs a round through the HTTP API without knowing the task; each task
// (tasks/*/simulated-users.ts) implements this shape, and services/example-tasks.ts names the shipped ones.
import type { FeedbackEvent } from '../core/feedback';

/** The model's answer to one ask, with the fields every feedback event carries. */
export interface UserReply {
  /** The feedback event's id. */
  id: string;
  campaignId: string;
  modelVersion: string;
  completion: string;
}

/** One exchange of a round: a user asks `prompt`, the production model answers, the user judges the answer. */
export interface UserAsk {
  prompt: string;
  /** Bytes the completion request asks for. */
  maxBytes: number;
  /** The feedback event the user sends about the reply. Deterministic: no randomness at judging time. */
  judge(reply: UserReply): FeedbackEvent;
}

export interface RoundOptions {
  round: number;
  events: number;
  seed: number;
  /** Users in the population. */
  users: number;
}

export interface SimulatedUsersOfTask {
  /** The round's asks in event order (the k-th is event k); a pure function of the options. */
  round(o: RoundOptions): Promise<UserAsk[]>;
}

/** Where a task's users find their material: FLYWHEEL_HOME (the built-in corpus) and the task's seed. */
export interface TaskUsersContext {
  home: string;
  seed: number;
}
