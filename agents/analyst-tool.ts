// The analyst as a tool the proposer may call before it replies: an OpenAI function whose arguments pick one
// structured view of the loop (the best so far, the plateau, what each kind of change did, one experiment). The
// worker answers it from PostgreSQL (activities/inner/analyst-views.ts, on loop-analyst.ts); this file only defines
// the function and reads its arguments. Public numbers only: the views never hold a held-out score, an eval item or a
// gate input.
import { z } from 'zod';
import type { AgentTool } from './agent-request';
import { oneLine } from './structured-reply';

export const ANALYST_TOOL_NAME = 'analyst';

export const ANALYST_VIEWS = ['best', 'plateau', 'by_change', 'experiment'] as const;
export type AnalystView = (typeof ANALYST_VIEWS)[number];

export const analystQuerySchema = z.strictObject({
  view: z.enum(ANALYST_VIEWS),
  experiment: z.number().int().nullable(),
});

export type AnalystQuery = z.output<typeof analystQuerySchema>;

/** The loop's answer to a query, as JSON-ready data (an `{error}` object for an experiment it does not have). */
export type AnalystAnswer = (query: AnalystQuery) => Promise<unknown>;

export const ANALYST_TOOL: AgentTool = {
  name: ANALYST_TOOL_NAME,
  description:
    "Structured results of this loop so far, from public scores only. view 'best': the best experiment so far (knobs, " +
    "commit, patch) and the recipe's kept commits; 'plateau': experiments since the best, whether the loop has " +
    "plateaued and the best score's history; 'by_change': knob-only experiments as a group and each patch " +
    "experiment against the best before it, kept or reverted; 'experiment': one experiment (set `experiment` to its " +
    'index) with its knobs, patch, status, public score and training-loss curve. `experiment` is null for the other views.',
  parameters: {
    type: 'object',
    additionalProperties: false,
    required: ['view', 'experiment'],
    properties: {
      view: { type: 'string', enum: [...ANALYST_VIEWS] },
      experiment: { type: ['integer', 'null'], description: "An experiment's index, for view 'experiment'." },
    },
  },
};

/** The text of the `tool` message answering one call: the view's JSON, or `{error}` for a call it cannot answer. */
export async function answerAnalystCall(name: string, args: string, answer: AnalystAnswer): Promise<string> {
  if (name !== ANALYST_TOOL_NAME) return JSON.stringify({ error: `no tool named "${oneLine(name, 40)}": the only tool is analyst` });
  let json: unknown;
  try {
    json = JSON.parse(args);
  } catch {
    return JSON.stringify({ error: `the arguments are not JSON: ${oneLine(args)}` });
  }
  const q = analystQuerySchema.safeParse(json);
  if (!q.success) {
    const issues = q.error.issues.map((i) => `${i.path.join('.') || '(arguments)'}: ${i.message}`).join('; ');
    return JSON.stringify({ error: `bad arguments: ${oneLine(issues)}` });
  }
  return JSON.stringify(await answer(q.data));
}
