// Which teacher a campaign gets: the chat model its spec names, when an agent caller exists (the worker's
// environment names an endpoint); otherwise the built-in one. The one place that decides, so workers and tests agree.
import type { CampaignSpec } from '../core/spec';
import type { AgentCaller } from './agent-request';
import { openAiTeacher } from './openai-teacher';
import { builtinTeacher, type Teacher } from './teacher';

/** `fallback`: the built-in teacher the campaign gets without a model (a task's own, when the spec names one). */
export function teacherFor(spec: CampaignSpec, agent: AgentCaller | undefined, fallback: Teacher = builtinTeacher): Teacher {
  const { model } = spec.outerLoop.teacher;
  return model && agent ? openAiTeacher(agent, model) : fallback;
}
