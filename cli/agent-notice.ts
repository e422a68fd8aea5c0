// The one line the CLI prints when a spec names agent models but this environment has no endpoint for them: the
// built-in proposer, analyst and teacher run instead (the workers decide from their own environment).
import { hasEndpoint, type AgentEnv } from '../agents/openai-client';
import type { CampaignSpec } from '../core/spec';

export function agentNotice(spec: CampaignSpec, env: AgentEnv): string | undefined {
  if (hasEndpoint(env)) return undefined;
  const named = [
    spec.agents.proposer.model && `agents.proposer.model "${spec.agents.proposer.model}"`,
    spec.agents.analyst.model && `agents.analyst.model "${spec.agents.analyst.model}"`,
    spec.outerLoop.teacher.model && `outerLoop.teacher.model "${spec.outerLoop.teacher.model}"`,
  ].filter(Boolean);
  if (named.length === 0) return undefined;
  return `note: ${named.join(', ')} set but neither OPENAI_API_KEY nor OPENAI_BASE_URL is: the built-in proposer, analyst and teacher are used`;
}
