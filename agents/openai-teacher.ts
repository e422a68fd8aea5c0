// The teacher as an OpenAI-compatible chat model: it explains a failure and weighs it, in structured output.
// The verified reference stays the training target whatever the model proposes, so a teacher can never put
// text of its own into a dataset; its proposed target is only reported in the critique.
import type OpenAI from 'openai';
import type { TrainingSignal } from '../core/teacher/builtin-teacher';
import { classifyAgentError } from './agent-errors';
import { loadPrompt } from './load-prompt';
import type { Teacher } from './teacher';
import { TEACHER_REPLY_JSON_SCHEMA, parseTeacherReply } from './teacher-reply';

/** The prompt file (agents/prompts/) the model teacher sends, recorded as `critiques.prompt_version`. */
export const TEACHER_PROMPT_VERSION = 'teacher-critique.v1';

export function openAiTeacher(client: OpenAI, model: string): Teacher {
  const system = loadPrompt(TEACHER_PROMPT_VERSION);
  return {
    name: model,
    promptVersion: TEACHER_PROMPT_VERSION,
    async critique(failure) {
      const { prompt, output, reference } = failure;
      const category = failure.category ?? 'code';
      let completion: OpenAI.Chat.Completions.ChatCompletion;
      try {
        completion = await client.chat.completions.create({
          model,
          messages: [
            { role: 'system', content: system },
            { role: 'user', content: JSON.stringify({ category, prompt, output, reference }) },
          ],
          response_format: { type: 'json_schema', json_schema: TEACHER_REPLY_JSON_SCHEMA },
        });
      } catch (e) {
        throw classifyAgentError(e, `teacher model "${model}"`, [client.apiKey, client.baseURL]);
      }
      const reply = parseTeacherReply(completion.choices[0]);

      const targetNote =
        reply.target === reference
          ? 'Its proposed target equals the verified reference.'
          : 'Its proposed target differs from the verified reference and was ignored: the reference stays the target.';
      const text = `Written by the teacher model "${model}" (${TEACHER_PROMPT_VERSION}). ${reply.critique} ${targetNote} Weight ${reply.weight}.`;
      const signals: TrainingSignal[] = [{ kind: 'sft', prompt, target: reference, weight: reply.weight, category }];
      if (output !== '' && output !== reference) signals.push({ kind: 'pair', prompt, chosen: reference, rejected: output, weight: reply.weight });
      return { text, signals };
    },
  };
}
