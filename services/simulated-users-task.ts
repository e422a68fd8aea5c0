// What a task hands the simulated users (core/task.ts): for a round, who asks which prompt and how that user judges
// the production model's answer. services/simulate-users.ts runs a round through the HTTP API without knowing the task.
export type { RoundOptions, SimulatedUsersOfTask, TaskUsersContext, UserAsk, UserReply } from '../core/task';
