// The built-in code task's `task` block of a campaign spec (kind `builtin-code`): its zod schema, which
// tasks/task-spec.ts puts in the spec's task union, and its type, which it adds to core/spec.ts's TaskSpecs.
import { z } from 'zod';

export const builtinCodeTaskSchema = z.strictObject({
  /** The built-in code-completion task (tasks/builtin-code), an example of a task. */
  kind: z.literal('builtin-code'),
  /** Completion items per eval split. @default 200 */
  completionItems: z.number().int().min(1).default(200),
  /** Loss chunks (bits-per-byte items) per eval split. @default 40 */
  lossItems: z.number().int().min(1).default(40),
});

export type BuiltinCodeTaskSpec = z.output<typeof builtinCodeTaskSchema>;

declare module '../../core/spec' {
  interface TaskSpecs {
    'builtin-code': BuiltinCodeTaskSpec;
  }
}
