// The campaign spec's parser, its `task` block assembled from the tasks: each task that builds its own suite gives its
// block's schema here (tasks/<name>/spec.ts), `custom` (core/spec.ts) is every other task's, and a block without a
// kind is the default task's. core/ knows no task and imports nothing of tasks/, so the parser is put together here;
// services/ and cli/ reach it through services/task-registry.ts.
import { z } from 'zod';
import { campaignSpecSchemaWith, customTaskSchema, parseSpecWith, type CampaignSpec } from '../core/spec';
import { builtinCodeTaskSchema } from './builtin-code/spec';

/** The task a spec's `task` block runs when it names no kind: the built-in code task. */
export const DEFAULT_TASK_KIND = builtinCodeTaskSchema.shape.kind.value;

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** What the campaign trains and is judged on. @default { kind: "builtin-code" } */
const taskSpecSchema = z.preprocess(
  (v) => (isRecord(v) && !('kind' in v) ? { ...v, kind: DEFAULT_TASK_KIND } : v),
  z.discriminatedUnion('kind', [builtinCodeTaskSchema, customTaskSchema]),
);

/** The whole campaign spec's schema (core/spec.ts campaignSpecSchemaWith over the tasks' blocks). */
export const campaignSpecSchema = campaignSpecSchemaWith(taskSpecSchema);

/** Validates a parsed spec object and fills in every default; throws InvalidSpecError. */
export function parseSpec(raw: unknown, where?: string): CampaignSpec {
  return parseSpecWith(campaignSpecSchema, raw, where);
}
