// The built-in task's simulated-user rounds: users ask the production model to continue lines of the corpus's train
// split and judge the answers against what the line really says (simulated-users.ts). The shape
// core/task.ts declares (SimulatedUsersOfTask), which services/simulate-users.ts runs through the HTTP API.
import { ensureCorpus, readTrainFiles } from './corpus-cache';
import { drawTrainPrompts, type TrainPrompt } from './train-prompts';
import { judge, simulatedPopulation } from './simulated-users';
import { Rng } from '../../core/stream-rng';
import { MAX_COMPLETION_BYTES } from '../../core/completion';
import { UsageError } from '../../core/errors';
import type { FeedbackEvent } from '../../core/feedback';

/** Where a round's prompts come from: the corpus folder (built when missing), or a pool to sample from. */
export interface PromptSource {
  corpusDir?: string;
  prompts?: readonly TrainPrompt[];
}

/** A round's prompts, in event order (the k-th answers event k): `events` draws from the pool, or from the corpus's train files. */
export async function promptsOfRound(o: PromptSource & { round: number; events: number; seed: number }): Promise<TrainPrompt[]> {
  const stream = `simulate-users:r${o.round}`;
  if (o.prompts) {
    if (o.prompts.length === 0) throw new UsageError('the prompt pool is empty');
    const rng = Rng.derive(o.seed, stream);
    return Array.from({ length: o.events }, () => o.prompts![rng.int(o.prompts!.length)]);
  }
  if (!o.corpusDir) throw new UsageError('give corpusDir or a prompt pool');
  const { files } = readTrainFiles(o.corpusDir, await ensureCorpus(o.corpusDir));
  const drawn = drawTrainPrompts(files, { count: o.events, seed: o.seed, stream });
  if (drawn.length < o.events) throw new UsageError(`the train split has only ${drawn.length} prompt positions, ${o.events} asked`);
  return drawn;
}

interface Reply {
  id: string;
  campaignId: string;
  modelVersion: string;
  completion: string;
}

/** The built-in task's users: each event's prompt from `source`, its user drawn from a seeded population. */
export function builtinCodeUsers(source: PromptSource) {
  return {
    async round(o: { round: number; events: number; seed: number; users: number }) {
      const prompts = await promptsOfRound({ ...source, ...o });
      const population = simulatedPopulation({ size: o.users, seed: o.seed });
      const pick = Rng.derive(o.seed, `simulate-users:who:r${o.round}`);
      return prompts.map((p) => {
        const user = population[pick.int(population.length)];
        return {
          prompt: p.prompt,
          maxBytes: Math.min(MAX_COMPLETION_BYTES, Buffer.byteLength(p.reference)),
          judge: (r: Reply): FeedbackEvent => judge(user, { ...r, prompt: p.prompt, reference: p.reference }),
        };
      });
    },
  };
}
