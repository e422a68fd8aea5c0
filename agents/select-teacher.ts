// Which teacher a campaign gets: the chat model its spec names, when the worker's environment has an endpoint
// for it; otherwise the built-in one. The one place that decides, so workers and tests agree.
import type { CampaignSpec } from '../core/spec';
import { hasEndpoint, openAiClient, type AgentEnv } from './openai-client';
import { openAiTeacher } from './openai-teacher';
import { builtinTeacher, type Teacher } from './teacher';

export function teacherFor(spec: CampaignSpec, env: AgentEnv): Teacher {
  const { model } = spec.outerLoop.teacher;
  return model && hasEndpoint(env) ? openAiTeacher(openAiClient(env), model) : builtinTeacher;
}
