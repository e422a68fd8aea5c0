// The LLM judge's pure half: its settings, the messages it sends and how it reads the verdict. The call through the
// OpenAI-compatible client is activities/eval/graders/llm-judge-call.ts. The rubric lives in the suite's settings.
import { z } from 'zod';

export const llmJudgeConfigSchema = z.strictObject({
  kind: z.literal('llm_judge'),
  /** The key of the rubric in the suite's `rubrics`. */
  rubric: z.string().min(1),
  /** The judge model. */
  model: z.string().min(1),
  /** Scores at or above this pass (1); below, fail (0). The judge scores 0..10. @default 7 */
  passAt: z.number().min(0).max(10).default(7),
});
export type LlmJudgeConfig = z.output<typeof llmJudgeConfigSchema>;

export const judgeVerdictSchema = z.strictObject({ score: z.number().min(0).max(10), reason: z.string() });
export type JudgeVerdict = z.output<typeof judgeVerdictSchema>;

export function judgeMessages(
  rubric: string,
  prompt: string,
  reference: string,
  output: string,
): { role: 'system' | 'user'; content: string }[] {
  return [
    {
      role: 'system',
      content: `You grade an answer against a rubric and a reference answer. Reply with JSON only: {"score": 0-10, "reason": "..."}.\nRubric:\n${rubric}`,
    },
    { role: 'user', content: JSON.stringify({ prompt, reference, answer: output }) },
  ];
}

/** The verdict in a judge's reply, or a one-line reason it is unusable. */
export function parseVerdict(content: string | null | undefined): { verdict?: JudgeVerdict; error?: string } {
  if (!content) return { error: 'the judge replied with no content' };
  let raw: unknown;
  try {
    raw = JSON.parse(content);
  } catch {
    return { error: `the judge's reply is not JSON: ${content.slice(0, 80)}` };
  }
  const r = judgeVerdictSchema.safeParse(raw);
  return r.success ? { verdict: r.data } : { error: `the judge's reply has the wrong shape: ${r.error.issues[0]?.message}` };
}
