// The teacher a custom task names as a program (spec `task.teacher.command`): started in the trainers' sandbox the
// first time a failure is critiqued or a revision checked, so a step with nothing to ask starts nothing, and closed by
// teachFailures (critiques) or critiqueEvalFailures (revisions).
import path from 'node:path';
import { commandTeacher, commandVerifier } from '../../agents/command-teacher';
import type { Teacher } from '../../agents/teacher';
import { JsonLinesCommand } from '../../backends/sandbox/json-lines-command';
import type { CampaignSpec } from '../../core/spec';
import type { AskCommand } from '../../core/task-command';
import { trainerSetupOf } from '../training/trainer-isolation';

export interface ProgramTeacher {
  teacher: Teacher;
  /** The program as the revision check: its verdict, or undefined where it cannot tell. */
  verify(prompt: string, output: string): Promise<boolean | undefined>;
  /** Ends the program, if it was started. */
  close(): void;
}

/** The spec's teacher program, or undefined when its task names none. */
export function programTeacherOf(spec: CampaignSpec, home: string): ProgramTeacher | undefined {
  if (spec.task.kind !== 'custom' || !spec.task.teacher) return undefined;
  const { command } = spec.task.teacher;
  let program: JsonLinesCommand | undefined;
  const ask: AskCommand = (body, read) => {
    // Hidden as from the trainer: FLYWHEEL_HOME, the predict scratch and the task's eval sources.
    program ??= new JsonLinesCommand({ role: 'teacher', command, hide: trainerSetupOf(spec, home).hide });
    return program.request(body, read);
  };
  return {
    teacher: commandTeacher(ask, `command:${path.basename(command.at(-1)!)}`),
    verify: commandVerifier(ask),
    close: () => program?.close(),
  };
}
