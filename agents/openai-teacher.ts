// The teacher as an OpenAI-compatible chat model: it explains a failure and weighs it, in structured output.
// The verified reference stays the training target whatever the model proposes, so a teacher can never put
// text of its own into a dataset; its proposed target is only reported in the critique.
import crypto from 'node:crypto';
import type { TrainingSignal } from '../core/teacher/builtin-teacher';
import { UnusableReplyError } from './agent-errors';
import type { AgentCaller } from './agent-request';
import { loadPrompt } from './load-prompt';
import type { Teacher } from './teacher';
import { TEACHER_REPLY_JSON_SCHEMA, parseTeacherReply, type TeacherReply } from './teacher-reply';

/** The prompt file (agents/prompts/) the model teacher sends, recorded as `critiques.prompt_version`. */
export const TEACHER_PROMPT_VERSION = 'teacher-critique.v1';

export function openAiTeacher(agent: AgentCaller, model: string): Teacher {
  const system = loadPrompt(TEACHER_PROMPT_VERSION);
  return {
    name: model,
    promptVersion: TEACHER_PROMPT_VERSION,
    async critique(failure) {
      const { prompt, output, reference } = failure;
      const category = failure.category ?? 'code';
      const user = JSON.stringify({ category, prompt, output, reference });
      // The failure itself names the call: concurrent critiques in one activity keep their keys on a retry.
      const callIndex = `teacher/${crypto.createHash('sha256').update(user).digest('hex').slice(0, 16)}`;
      const { callId, choice } = await agent.complete({
        role: 'teacher',
        promptVersion: TEACHER_PROMPT_VERSION,
        model,
        callIndex,
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: user },
        ],
        schema: TEACHER_REPLY_JSON_SCHEMA,
      });
      let reply: TeacherReply;
      try {
        reply = parseTeacherReply(choice);
      } catch (e) {
        if (e instanceof UnusableReplyError) await agent.judge(callId, 'unusable', e.message);
        throw e;
      }

      const targetNote =
        reply.target === reference
          ? 'Its proposed target equals the verified reference.'
          : 'Its proposed target differs from the verified reference and was ignored: the reference stays the target.';
      const text = `Written by the teacher model "${model}" (${TEACHER_PROMPT_VERSION}). ${reply.critique} ${targetNote} Weight ${reply.weight}.`;
      const signals: TrainingSignal[] = [{ kind: 'sft', prompt, target: reference, weight: reply.weight, category }];
      if (output !== '' && output !== reference)
        signals.push({ kind: 'pair', prompt, chosen: reference, rejected: output, weight: reply.weight });
      return { text, signals };
    },
  };
}
