// A task's teacher written as a program in any language (spec `task.teacher.command`, docs/tasks.md): each failure
// is sent as `{"type": "critique", "prompt", "output", "reference", "category"}` and the program answers
// `{"text": "…", "weight": 1.5, "category": "…"}`. As with every teacher the reference stays the training target; the
// program says what went wrong, how much the example weighs and which loss-weight category it belongs to. As the
// revision check, `{"type": "verify", "prompt", "output"}` is answered `{"verified": true | false | null}` (null: it
// cannot tell, and the verified reference decides, as for a task without one). Pure: the
// program is reached through an AskCommand (core/task-command.ts), started by the caller in the trainers' sandbox.
import type { Failure, TeacherCritique, TrainingSignal } from '../core/teacher/builtin-teacher';
import { stringField, type AskCommand } from '../core/task-command';
import type { Teacher } from './teacher';

/** Recorded as `critiques.teacher` (the program's own `name`, when it gives one, follows the colon). */
export const COMMAND_TEACHER = 'command';
/** Recorded as `critiques.prompt_version` when the program names none. */
export const COMMAND_TEACHER_PROMPT_VERSION = 'command-v1';
/** Heaviest weight a program may give one example (the built-in teacher's are from 1 to 2). */
export const MAX_COMMAND_WEIGHT = 10;

function readCritique(answer: Record<string, unknown>, failure: Failure): TeacherCritique {
  const text = stringField(answer, 'text')!.trim();
  if (text === '') throw new Error('"text" must not be empty');
  const weight = answer.weight ?? 1;
  if (typeof weight !== 'number' || !Number.isFinite(weight) || weight <= 0 || weight > MAX_COMMAND_WEIGHT)
    throw new Error(`"weight" must be a number above 0 and at most ${MAX_COMMAND_WEIGHT}, got ${JSON.stringify(weight)}`);
  const category = stringField(answer, 'category', true) ?? failure.category ?? 'code';
  const { prompt, output, reference } = failure;
  const signals: TrainingSignal[] = [{ kind: 'sft', prompt, target: reference, weight, category }];
  if (output !== '' && output !== reference) signals.push({ kind: 'pair', prompt, chosen: reference, rejected: output, weight });
  return { text, signals };
}

/** The program as the outer loop's Teacher (agents/teacher.ts); `name` and `promptVersion` are recorded on each critique. */
export function commandTeacher(ask: AskCommand, name = COMMAND_TEACHER, promptVersion = COMMAND_TEACHER_PROMPT_VERSION): Teacher {
  return {
    name,
    promptVersion,
    critique: (failure) =>
      ask(
        {
          type: 'critique',
          prompt: failure.prompt,
          output: failure.output,
          reference: failure.reference,
          category: failure.category ?? null,
        },
        (a) => readCritique(a, failure),
      ),
  };
}

/** The program's verdict on a revision of `prompt`: true or false, or undefined where it says it cannot tell (null). */
export function commandVerifier(ask: AskCommand): (prompt: string, output: string) => Promise<boolean | undefined> {
  return (prompt, output) =>
    ask({ type: 'verify', prompt, output }, (answer) => {
      const v = answer.verified;
      if (v === null) return undefined;
      if (typeof v !== 'boolean')
        throw new Error(`"verified" must be true, false or null, got ${v === undefined ? 'nothing' : JSON.stringify(v)}`);
      return v;
    });
}
