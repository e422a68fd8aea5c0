// The LLM judge: one chat completion per item through the OpenAI-compatible client, with the suite's rubric. An
// unusable reply is an error for that item (never a pass); a refused request or a server error fails the activity,
// so Temporal's retry policy decides.
import type OpenAI from 'openai';
import type { GradeOutcome } from '../../../core/graders';
import { judgeMessages, parseVerdict, type LlmJudgeConfig } from '../../../core/graders/llm-judge';

export async function callLlmJudge(
  client: OpenAI,
  config: LlmJudgeConfig,
  rubric: string,
  item: { prompt: string; reference: string },
  output: string,
): Promise<GradeOutcome> {
  const reply = await client.chat.completions.create({
    model: config.model,
    messages: judgeMessages(rubric, item.prompt, item.reference, output),
    response_format: { type: 'json_object' },
    temperature: 0,
  });
  const { verdict, error } = parseVerdict(reply.choices[0]?.message?.content);
  if (!verdict) return { score: 0, error: error! };
  return { score: verdict.score >= config.passAt ? 1 : 0 };
}
